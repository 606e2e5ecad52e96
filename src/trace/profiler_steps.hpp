// What the profiler steps of a source trace (trace6.md §4.2.1) say about one another, read from
// the run's meta: every stage that shows the steps (the evidence's step statistics, comparisons
// of steps as runs, the ranks of a run) treats a step cut short alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "candle_graph/trace_events.hpp"

namespace candle_graph {

// PyTorch's name of a profiler step, `ProfilerStep#<digits>` (also the measured span's name in a
// trace converted at one step): true for such a name, with N in `number`.
bool parse_profiler_step(std::string_view name, std::uint64_t& number);

// The number of the last step when the profiler's stop cut it short and another step was
// measured (the importer's tag `convert.incomplete_last_step_skipped`); nullopt otherwise. Such
// a step lasted as long as the profiler ran on, not as long as a step takes.
std::optional<std::uint64_t> cut_short_step(const TraceRunMeta& run);

}  // namespace candle_graph
