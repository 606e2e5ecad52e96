// The profiler steps of a source trace (trace6.md §4.2.1) as a distribution: median, min, max
// and spread of their wall times, and whether the measured step is typical of them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "candle_graph/trace_events.hpp"

namespace candle_graph::evidence {

struct StepStats {
  std::uint64_t count = 0;
  std::uint64_t median_wall_ns = 0;  // the lower median for an even count
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

StepStats step_stats(std::span<const ProfilerStepRecord> steps, std::uint64_t chosen);

}  // namespace candle_graph::evidence
