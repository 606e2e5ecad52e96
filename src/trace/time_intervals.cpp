#include "trace/time_intervals.hpp"

#include <algorithm>

namespace candle_graph {

std::vector<TimeInterval> merge_intervals(std::vector<TimeInterval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::vector<TimeInterval> out;
  for (const TimeInterval& i : intervals) {
    if (i.second <= i.first) continue;
    if (!out.empty() && i.first <= out.back().second)
      out.back().second = std::max(out.back().second, i.second);
    else
      out.push_back(i);
  }
  return out;
}

std::uint64_t covered_length(const std::vector<TimeInterval>& disjoint) {
  std::uint64_t n = 0;
  for (const TimeInterval& i : disjoint)
    n = n + (i.second - i.first) < n ? UINT64_MAX : n + (i.second - i.first);
  return n;
}

std::uint64_t overlap_length(const std::vector<TimeInterval>& a,
                             const std::vector<TimeInterval>& b) {
  std::uint64_t n = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const std::uint64_t lo = std::max(a[i].first, b[j].first);
    const std::uint64_t hi = std::min(a[i].second, b[j].second);
    if (lo < hi) n += hi - lo;
    (a[i].second < b[j].second ? i : j) += 1;
  }
  return n;
}

}  // namespace candle_graph
