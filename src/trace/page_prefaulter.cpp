#include "trace/page_prefaulter.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

namespace candle_graph {
namespace {

#ifndef MADV_POPULATE_WRITE
constexpr int MADV_POPULATE_WRITE = 23;  // Linux 5.14; older kernels answer EINVAL
#endif

std::uintptr_t page_size() {
  static const auto size = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

}  // namespace

PagePrefaulter::PagePrefaulter() : thread_([this] { work(); }) {}

PagePrefaulter::~PagePrefaulter() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  ready_.notify_one();
  thread_.join();
}

void PagePrefaulter::populate(const void* begin, const void* end) {
  const std::uintptr_t page = page_size();
  const auto first = reinterpret_cast<std::uintptr_t>(begin);
  const std::uintptr_t from = (first + page - 1) & ~(page - 1);
  const std::uintptr_t to = reinterpret_cast<std::uintptr_t>(end) & ~(page - 1);
  if (to <= from) return;
  // The kernel only maps the pages (nothing is written through this pointer).
  void* at = const_cast<char*>(static_cast<const char*>(begin)) + (from - first);
  {
    std::lock_guard lock(mutex_);
    if (unsupported_) return;
    queue_.emplace_back(at, to - from);
  }
  ready_.notify_one();
}

void PagePrefaulter::work() {
  for (;;) {
    std::pair<void*, std::size_t> range;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      range = queue_.front();
      queue_.pop_front();
    }
    // ENOMEM (no longer mapped) and EFAULT are the range's own business; EINVAL means the
    // kernel has no MADV_POPULATE_WRITE.
    if (::madvise(range.first, range.second, MADV_POPULATE_WRITE) != 0 && errno == EINVAL) {
      std::lock_guard lock(mutex_);
      unsupported_ = true;
      queue_.clear();
    }
  }
}

}  // namespace candle_graph
