// The session clock: monotonic nanoseconds, read on every record and span edge.
//
// Why not steady_clock directly: on the virtual machines that run most training jobs, the vDSO
// clock_gettime costs ~40 ns, a third of a record_op. Where the CPU has an invariant TSC (it ticks
// at a constant rate in every power state, the same on every core), the clock reads the TSC
// (~8 ns) and scales it to nanoseconds with a factor calibrated once per process against
// steady_clock, from which it also takes its origin; elsewhere it is steady_clock itself.
// Tests: tests/instrument/clock_test.cpp.
#pragma once

#include <chrono>
#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace candle_graph::detail {

struct TscScale {
  bool enabled = false;  // false: use steady_clock
  std::uint64_t base_tsc = 0;
  std::int64_t base_ns = 0;  // steady_clock nanoseconds at base_tsc
  std::uint64_t mult = 0;    // nanoseconds per tick, 32.32 fixed point
};

// Measures the TSC against steady_clock (about 2 ms of spinning); disabled where unusable.
TscScale calibrate_tsc() noexcept;

// calibrate_tsc() on first use, once per process.
const TscScale& tsc_scale() noexcept;

// Nanoseconds on steady_clock's scale for a TSC value under `scale` (which must be enabled).
inline std::int64_t tsc_to_ns(const TscScale& scale, std::uint64_t tsc) noexcept {
  // Signed: a core whose TSC lags the calibrating core by a few cycles reads just before base.
  const auto ticks = static_cast<std::int64_t>(tsc - scale.base_tsc);
  return scale.base_ns +
         static_cast<std::int64_t>((static_cast<__int128>(ticks) * scale.mult) >> 32);
}

inline std::int64_t steady_now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Monotonic nanoseconds on steady_clock's scale and origin.
inline std::int64_t now_tick() noexcept {
#if defined(__x86_64__)
  static const TscScale& scale = tsc_scale();
  if (scale.enabled) [[likely]]
    return tsc_to_ns(scale, __rdtsc());
#endif
  return steady_now_ns();
}

}  // namespace candle_graph::detail
