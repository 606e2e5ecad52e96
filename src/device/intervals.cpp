#include "device/intervals.hpp"

#include <algorithm>

namespace candle_graph::device {

std::vector<Interval> merged(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::vector<Interval> out;
  for (const Interval& i : intervals) {
    if (i.second <= i.first) continue;
    if (!out.empty() && i.first <= out.back().second)
      out.back().second = std::max(out.back().second, i.second);
    else
      out.push_back(i);
  }
  return out;
}

std::uint64_t length(const std::vector<Interval>& disjoint) {
  std::uint64_t n = 0;
  for (const Interval& i : disjoint)
    n = n + (i.second - i.first) < n ? UINT64_MAX : n + (i.second - i.first);
  return n;
}

std::uint64_t overlap_length(const std::vector<Interval>& a, const std::vector<Interval>& b) {
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

}  // namespace candle_graph::device
