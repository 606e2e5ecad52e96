#include "trace/page_prefaulter.hpp"

#include "trace/huge_pages.hpp"

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

PagePrefaulter::PagePrefaulter(Thread thread) {
  if (thread == Thread::own) thread_ = std::thread([this] { work(); });
}

PagePrefaulter::~PagePrefaulter() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  ready_.notify_one();
  thread_.join();
}

void PagePrefaulter::populate(const void* begin, const void* end) {
  if (end <= begin) return;
  const auto bytes =
      static_cast<std::size_t>(static_cast<const char*>(end) - static_cast<const char*>(begin));
  // The kernel only maps the pages (nothing is written through this pointer).
  const PageSpan span = whole_pages_inside(begin, bytes, page_size());
  if (span.bytes == 0) return;
  {
    std::lock_guard lock(mutex_);
    if (unsupported_) return;
    // Without a thread of its own, stretches wait only as long as someone has time for them:
    // the oldest, soon filled anyway, make room for the newest.
    if (!thread_.joinable() && queue_.size() >= kMaxWaiting) queue_.pop_front();
    queue_.emplace_back(span.begin, span.bytes);
  }
  if (thread_.joinable()) ready_.notify_one();
}

bool PagePrefaulter::populate_one() {
  std::pair<void*, std::size_t> range;
  {
    std::lock_guard lock(mutex_);
    if (queue_.empty()) return false;
    range = queue_.front();
    queue_.pop_front();
  }
  // ENOMEM (no longer mapped) and EFAULT are the range's own business; EINVAL means the kernel
  // has no MADV_POPULATE_WRITE.
  if (::madvise(range.first, range.second, MADV_POPULATE_WRITE) != 0 && errno == EINVAL) {
    std::lock_guard lock(mutex_);
    unsupported_ = true;
    queue_.clear();
  }
  return true;
}

void PagePrefaulter::work() {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
    }
    populate_one();
  }
}

}  // namespace candle_graph
