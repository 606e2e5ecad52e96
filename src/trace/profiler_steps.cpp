#include "trace/profiler_steps.hpp"

#include <span>

namespace candle_graph {

std::optional<std::uint64_t> cut_short_step(const TraceRunMeta& run) {
  const std::span<const ProfilerStepRecord> steps = run.profiler_steps;
  if (steps.size() < 2 || steps.back().step == run.capture_step) return std::nullopt;
  for (const Tag& t : run.tags)
    if (t.key == "convert.incomplete_last_step_skipped" && t.value != "0") return steps.back().step;
  return std::nullopt;
}

}  // namespace candle_graph
