// Faults memory in on another thread before the thread that fills it gets there. A document or a
// graph grows by a few hundred MB for a large trace; each first write to one of its pages is a
// page fault, and on this kind of machine those faults (with the kernel zeroing each page) were a
// third of a one-thread read. The thread that fills the memory hands the next stretches to this
// class, which asks the kernel to map them writable (MADV_POPULATE_WRITE: no write, no change of
// contents, so it may run beside the thread that fills them), either on a thread of its own or
// on threads that would otherwise wait (populate_one).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "trace/huge_pages.hpp"

namespace candle_graph {

class PagePrefaulter {
 public:
  enum class Thread { own, none };
  // With Thread::none the stretches wait for populate_one(), called by threads with nothing else
  // to do (the parallel reader's threads waiting for their turn): no thread to wake for each one.
  explicit PagePrefaulter(Thread thread = Thread::own);
  ~PagePrefaulter();
  PagePrefaulter(const PagePrefaulter&) = delete;
  PagePrefaulter& operator=(const PagePrefaulter&) = delete;

  // Queues the whole pages inside [begin, end). A range that is no longer mapped when its turn
  // comes (an array that moved) is skipped by the kernel; nothing is ever written.
  void populate(const void* begin, const void* end);
  // Maps the oldest stretch queued, on the calling thread; false when none was queued.
  bool populate_one();

 private:
  void work();

  static constexpr std::size_t kMaxWaiting = 64;  // stretches queued with Thread::none
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::pair<void*, std::size_t>> queue_;
  bool stop_ = false;
  bool unsupported_ = false;  // a kernel before 5.14: the reader runs as without this thread
  std::thread thread_;        // none with Thread::none
};

// Where an array of `n` T will live once filled: its capacity, advised (reserve_in_huge_pages)
// and, with a prefaulter, being mapped on the other thread while this one works on something else.
template <typename T, typename Alloc>
void reserve_ahead(std::vector<T, Alloc>& v, std::size_t n, PagePrefaulter* prefaulter) {
  reserve_in_huge_pages(v, n);
  if (prefaulter != nullptr) prefaulter->populate(v.data(), v.data() + n);
}

}  // namespace candle_graph
