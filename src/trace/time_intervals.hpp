// Half-open time intervals [begin, end) on one clock, and the set operations the importers and
// the device analyses need: merge (the union as sorted disjoint intervals), its length, and the
// length of the intersection of two unions.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace candle_graph {

using TimeInterval = std::pair<std::uint64_t, std::uint64_t>;

// Sorted, disjoint, non-empty intervals covering exactly what `intervals` covers. Touching
// intervals merge.
std::vector<TimeInterval> merge_intervals(std::vector<TimeInterval> intervals);

std::uint64_t covered_length(const std::vector<TimeInterval>& disjoint);

// The length of the time both unions cover (both from merge_intervals()).
std::uint64_t overlap_length(const std::vector<TimeInterval>& a,
                             const std::vector<TimeInterval>& b);

}  // namespace candle_graph
