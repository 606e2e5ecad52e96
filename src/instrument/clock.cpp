#include "instrument/clock.hpp"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace candle_graph::detail {

#if defined(__x86_64__)
namespace {

// CPUID 0x80000007 EDX bit 8: the TSC is invariant (Linux shows it as the nonstop_tsc flag).
bool has_invariant_tsc() noexcept {
  unsigned a = 0, b = 0, c = 0, d = 0;
  // The return type differs between GCC (unsigned) and clang (int) headers.
  if (static_cast<unsigned>(__get_cpuid_max(0x80000000, nullptr)) < 0x80000007u) return false;
  __cpuid(0x80000007, a, b, c, d);
  return (d & (1u << 8)) != 0;
}

// One (steady_clock, TSC) pair: the TSC is read on both sides of the clock read and the
// midpoint kept. A preemption between the two TSC reads (a loaded CI machine running tests in
// parallel) would put the midpoint hundreds of microseconds off and, at an end of the 2 ms
// calibration window, skew the rate by percents; so the pair with the narrowest bracket out of
// several tries is kept (a few hundred ticks when nothing interrupts).
struct Sample {
  std::int64_t ns;
  std::uint64_t tsc;
  std::uint64_t bracket;  // ticks between the two TSC reads
};
Sample sample_once() noexcept {
  const std::uint64_t before = __rdtsc();
  const std::int64_t ns = steady_now_ns();
  const std::uint64_t after = __rdtsc();
  return {ns, before + (after - before) / 2, after - before};
}
Sample sample() noexcept {
  Sample best = sample_once();
  for (int i = 0; i < 15; ++i) {
    const Sample s = sample_once();
    if (s.bracket < best.bracket) best = s;
  }
  return best;
}

}  // namespace

TscScale calibrate_tsc() noexcept {
  TscScale s;
  // CANDLE_GRAPH_CLOCK=steady forces steady_clock (e.g. to rule the TSC out when timings look odd).
  if (const char* forced = std::getenv("CANDLE_GRAPH_CLOCK");
      forced && !std::strcmp(forced, "steady"))
    return s;
  if (!has_invariant_tsc()) return s;
  const Sample first = sample();
  Sample last = first;
  // 2 ms: read jitter of ~50 ns then bounds the rate error to ~2.5e-5 (25 µs per second of
  // capture), far below the durations a trace reports.
  while (last.ns - first.ns < 2'000'000) last = sample();
  const std::uint64_t ticks = last.tsc - first.tsc;
  const auto ns = static_cast<std::uint64_t>(last.ns - first.ns);
  if (ticks == 0 || last.tsc < first.tsc) return s;  // a TSC that does not advance: not usable
  s.mult = static_cast<std::uint64_t>((static_cast<unsigned __int128>(ns) << 32) / ticks);
  if (s.mult == 0) return s;
  s.base_tsc = last.tsc;
  s.base_ns = last.ns;
  s.enabled = true;
  return s;
}

#else
TscScale calibrate_tsc() noexcept {
  return {};
}
#endif

const TscScale& tsc_scale() noexcept {
  static const TscScale scale = calibrate_tsc();
  return scale;
}

}  // namespace candle_graph::detail
