#include "evidence/step_stats.hpp"

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "trace/profiler_steps.hpp"

namespace candle_graph::evidence {
namespace {

std::uint64_t lower_median(std::vector<std::uint64_t> v) {
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

}  // namespace

StepStats step_stats(const TraceRunMeta& run) {
  StepStats s;
  std::span<const ProfilerStepRecord> steps = run.profiler_steps;
  const std::uint64_t chosen = run.capture_step;
  s.left_out_step = cut_short_step(run);
  if (s.left_out_step) steps = steps.first(steps.size() - 1);
  s.count = steps.size();
  if (steps.empty()) return s;
  std::vector<std::uint64_t> wall, busy;
  for (const ProfilerStepRecord& r : steps) {
    wall.push_back(r.wall_ns);
    busy.push_back(r.device_busy_ns);
  }
  s.median_wall_ns = lower_median(wall);
  s.median_device_busy_ns = lower_median(busy);
  s.min_wall_ns = *std::min_element(wall.begin(), wall.end());
  s.max_wall_ns = *std::max_element(wall.begin(), wall.end());
  s.spread_ns = s.max_wall_ns - s.min_wall_ns;
  for (const ProfilerStepRecord& r : steps) {
    if (r.step != chosen || s.median_wall_ns == 0) continue;
    const double pct = (static_cast<double>(r.wall_ns) - static_cast<double>(s.median_wall_ns)) *
                       100.0 / static_cast<double>(s.median_wall_ns);
    s.chosen_vs_median_percent = pct;
    s.chosen_typical = std::fabs(pct) <= kTypicalPercent;
  }
  return s;
}

}  // namespace candle_graph::evidence
