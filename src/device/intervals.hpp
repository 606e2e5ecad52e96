// Half-open time intervals [begin, end) on one clock, and the set operations the device analyses
// need: merge (the union as sorted disjoint intervals), its length, and the length of the
// intersection of two unions.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace candle_graph::device {

using Interval = std::pair<std::uint64_t, std::uint64_t>;

// Sorted, disjoint, non-empty intervals covering exactly what `intervals` covers. Touching
// intervals merge.
std::vector<Interval> merged(std::vector<Interval> intervals);

std::uint64_t length(const std::vector<Interval>& disjoint);

// The length of the time both unions cover (both merged()).
std::uint64_t overlap_length(const std::vector<Interval>& a, const std::vector<Interval>& b);

}  // namespace candle_graph::device
