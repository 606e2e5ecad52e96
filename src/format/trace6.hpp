// The trace/6 wire names every reader and writer of JSONL lines shares (docs/format/trace6.md §4):
// the nine event kinds, in the order of the TraceEvent variant. Constants only; the enumerations'
// wire strings are in candle_graph/trace_format.hpp.
#pragma once

#include <array>
#include <string_view>

namespace candle_graph::format::trace6 {

inline constexpr std::array<std::string_view, 9> kEventKinds = {
    "meta",   "span_start",    "span_end", "op",  "tensor",
    "memory", "device_memory", "gradient", "edge"};

}  // namespace candle_graph::format::trace6
