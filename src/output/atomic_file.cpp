#include "output/atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <string>

#include "candle_graph/error.hpp"
#include "output/write_guard.hpp"

namespace candle_graph::output {
namespace fs = std::filesystem;

namespace {
std::string errno_text() {
  return std::strerror(errno);
}
}  // namespace

AtomicFile::AtomicFile(fs::path target) : target_(std::move(target)) {
  refuse_inside_bundle(target_);
  const fs::path parent = target_.parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec)
      throw Error(target_.string(), 0,
                  "cannot create directory " + parent.string() + ": " + ec.message());
  }
  std::random_device rd;
  temp_ = target_;
  temp_ += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(rd());
  file_ = std::fopen(temp_.c_str(), "wbx");
  if (file_ == nullptr)
    throw Error(target_.string(), 0, "cannot create output file: " + errno_text());
}

AtomicFile::~AtomicFile() {
  if (file_ != nullptr) {
    std::fclose(file_);
    std::error_code ec;
    fs::remove(temp_, ec);
  }
}

void AtomicFile::write(std::string_view bytes) {
  if (file_ == nullptr) throw Error(target_.string(), 0, "write after commit");
  if (bytes.empty()) return;
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size())
    throw Error(target_.string(), 0, "cannot write output file: " + errno_text());
}

void AtomicFile::commit() {
  if (file_ == nullptr) throw Error(target_.string(), 0, "output file committed twice");
  const bool flushed = std::fflush(file_) == 0;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  std::error_code ec;
  if (!flushed || !closed) {
    const std::string why = errno_text();
    fs::remove(temp_, ec);
    throw Error(target_.string(), 0, "cannot write output file: " + why);
  }
  fs::rename(temp_, target_, ec);
  if (ec) {
    fs::remove(temp_, ec);
    throw Error(target_.string(), 0, "cannot replace output file: " + ec.message());
  }
}

void write_file_atomic(const fs::path& target, std::string_view bytes) {
  AtomicFile file(target);
  file.write(bytes);
  file.commit();
}

bool same_file(const fs::path& a, const fs::path& b) noexcept {
  std::error_code ec;
  const bool eq = fs::equivalent(a, b, ec);
  return !ec && eq;
}

}  // namespace candle_graph::output
