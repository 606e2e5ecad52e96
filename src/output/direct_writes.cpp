#include "output/direct_writes.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <system_error>

namespace candle_graph::output {

namespace {

[[noreturn]] void throw_errno() {
  throw std::system_error(errno, std::generic_category());
}

void write_fully(int fd, const char* bytes, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, bytes, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno();
    }
    bytes += n;
    size -= static_cast<std::size_t>(n);
  }
}

bool set_direct(int fd, bool on) {
  const int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && ::fcntl(fd, F_SETFL, on ? flags | O_DIRECT : flags & ~O_DIRECT) == 0;
}

}  // namespace

void DirectWrites::FreeAligned::operator()(char* p) const noexcept {
  std::free(p);
}

std::unique_ptr<DirectWrites> DirectWrites::start(int fd, std::chrono::nanoseconds slow_stage) {
  const off_t at = ::lseek(fd, 0, SEEK_CUR);
  if (at < 0 || at % static_cast<off_t>(kAlign) != 0 || !set_direct(fd, true)) return nullptr;
  return std::unique_ptr<DirectWrites>(new DirectWrites(fd, slow_stage));
}

bool DirectWrites::too_slow(std::span<std::chrono::nanoseconds> judged,
                            std::chrono::nanoseconds slow_stage) {
  if (judged.empty()) return false;
  const auto middle = judged.begin() + static_cast<std::ptrdiff_t>(judged.size() / 2);
  std::nth_element(judged.begin(), middle, judged.end());
  return *middle > slow_stage;
}

DirectWrites::DirectWrites(int fd, std::chrono::nanoseconds slow_stage)
    : fd_(fd),
      slow_stage_(slow_stage),
      stage_(static_cast<char*>(std::aligned_alloc(kAlign, kStage))) {
  if (!stage_) {
    set_direct(fd_, false);
    throw std::bad_alloc();
  }
}

DirectWrites::~DirectWrites() = default;

bool DirectWrites::write(std::string_view bytes) {
  while (!bytes.empty()) {
    const std::size_t take = std::min(bytes.size(), kStage - staged_);
    std::memcpy(stage_.get() + staged_, bytes.data(), take);
    staged_ += take;
    bytes.remove_prefix(take);
    if (staged_ == kStage && !write_stage()) {
      write_fully(fd_, bytes.data(), bytes.size());
      return false;
    }
  }
  return true;
}

// False when direct writing stopped; the stage has then gone through the page cache.
bool DirectWrites::write_stage() {
  const auto began = std::chrono::steady_clock::now();
  const ssize_t n = ::write(fd_, stage_.get(), staged_);
  if (n == static_cast<ssize_t>(staged_)) {
    staged_ = 0;
    if (++stages_ <= kWarmupStages) return true;
    times_.push_back(std::chrono::steady_clock::now() - began);
    if (times_.size() < kStagesJudged) return true;
    if (!too_slow(times_, slow_stage_)) return true;
    stop(0);
    return false;
  }
  // A refusal (EINVAL: direct writes are not taken here after all), a short write or a full
  // disk: the rest goes through the page cache, where a real error happens again and is thrown.
  stop(n > 0 ? static_cast<std::size_t>(n) : 0);
  return false;
}

void DirectWrites::stop(std::size_t stage_written) {
  if (!set_direct(fd_, false)) throw_errno();
  const std::size_t rest = staged_ - stage_written;
  staged_ = 0;
  write_fully(fd_, stage_.get() + stage_written, rest);
}

void DirectWrites::finish() {
  stop(0);
}

}  // namespace candle_graph::output
