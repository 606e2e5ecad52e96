// The session lock. It is held only to copy one formatted line into the session buffer and to
// update span bookkeeping (tens of nanoseconds), so waiting threads spin briefly and then yield
// instead of sleeping in the kernel. Unlike std::mutex, release is a plain store, not a second
// atomic read-modify-write: one atomic instruction per record instead of two (~10 ns each on the
// virtual machines we measured; bench/instrument_bench.cpp).
#pragma once

#include <atomic>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace candle_graph::detail {

class SpinLock {
 public:
  void lock() noexcept {
    if (!locked_.exchange(true, std::memory_order_acquire)) [[likely]]
      return;
    contended();
  }
  bool try_lock() noexcept { return !locked_.exchange(true, std::memory_order_acquire); }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  [[gnu::noinline]] void contended() noexcept {
    for (unsigned spins = 0;; ++spins) {
      // Test before test-and-set: waiting threads read a shared cache line instead of bouncing
      // it between cores with writes.
      while (locked_.load(std::memory_order_relaxed)) {
        if (spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
          _mm_pause();
#endif
          ++spins;
        } else {
          std::this_thread::yield();  // the holder may be preempted: give it the core
        }
      }
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
    }
  }

  std::atomic<bool> locked_{false};
};

}  // namespace candle_graph::detail
