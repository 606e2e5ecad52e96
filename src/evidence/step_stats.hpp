// The profiler steps of a source trace (trace6.md §4.2.1) as a distribution: median, min, max
// and spread of their wall times, and whether the measured step is typical of them. A last step
// that the profiler's stop cut short (the import measured the one before it and tagged the run
// `convert.incomplete_last_step_skipped`) is left out: it lasted as long as the profiler ran on,
// not as long as a step takes, and would make the measured step look atypical.
#pragma once

#include <cstdint>
#include <optional>

#include "candle_graph/trace_events.hpp"

namespace candle_graph::evidence {

struct StepStats {
  std::uint64_t count = 0;                     // the steps the figures cover
  std::optional<std::uint64_t> left_out_step;  // the number of the step cut short
  std::uint64_t median_wall_ns = 0;            // the lower median for an even count
  std::uint64_t min_wall_ns = 0;
  std::uint64_t max_wall_ns = 0;
  std::uint64_t spread_ns = 0;  // max - min
  std::uint64_t median_device_busy_ns = 0;
  // The measured step's wall time relative to the median, in percent (+ slower), and whether it
  // lies within kTypicalPercent of the median.
  std::optional<double> chosen_vs_median_percent;
  bool chosen_typical = true;
};

inline constexpr double kTypicalPercent = 10.0;

StepStats step_stats(const TraceRunMeta& run);

}  // namespace candle_graph::evidence
