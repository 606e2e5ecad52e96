// trace6.md §7.1 memory profile types as JSON (declaration order for evidence/graph, sorted for
// summary and query documents). `by_category` maps always have sorted keys.
#pragma once

#include "candle_graph/memory.hpp"
#include "output/json_stream.hpp"

namespace candle_graph::memory {

void write_category_bytes(output::JsonStream& w, const CategoryBytes& c);
void write_memory_summary(output::JsonStream& w, const MemorySummary& s, output::KeyOrder order);
void write_timeline(output::JsonStream& w, const std::vector<MemoryTimelinePoint>& timeline,
                    output::KeyOrder order);
void write_peak_breakdown(output::JsonStream& w, const std::vector<LiveAllocation>& live,
                          output::KeyOrder order);
void write_by_device(output::JsonStream& w, const std::vector<DeviceMemoryStats>& devices,
                     output::KeyOrder order);
void write_memory_profile(output::JsonStream& w, const MemoryProfile& p, output::KeyOrder order);
void write_shape(output::JsonStream& w, std::span<const std::uint64_t> shape);

}  // namespace candle_graph::memory
