// nest_intervals (trace/host_nesting.hpp): the parent of every interval and the self times, on
// intervals given already in nesting order (the function then skips its sort) and shuffled (it
// sorts). The reference is a brute force over the definition instead of a stack: on its lane, an
// interval's parent is the last interval before it in (start, longer first) order that contains
// it and that every interval between them left in place, i.e. none of the intervals between
// them ended after it (a partial overlap pops it) or started at or after its end.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "candle_graph/trace.hpp"
#include "support/evidence_helpers.hpp"
#include "trace/host_nesting.hpp"

using namespace candle_graph;

namespace {

struct Intervals {
  std::vector<std::uint64_t> lanes, starts, totals;
};

// Distinct (lane, start, total) triples, so that the stream order never breaks a tie and a
// shuffled copy nests the same way.
Intervals random_intervals(std::mt19937& rng, std::size_t n) {
  Intervals v;
  std::vector<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>> seen;
  while (v.starts.size() < n) {
    const std::uint64_t lane = rng() % 3, start = rng() % 200, total = 1 + rng() % 60;
    if (std::find(seen.begin(), seen.end(), std::tuple{lane, start, total}) != seen.end()) continue;
    seen.emplace_back(lane, start, total);
    v.lanes.push_back(lane);
    v.starts.push_back(start);
    v.totals.push_back(total);
  }
  return v;
}

// The intervals in nesting order: by lane, start, longer first.
Intervals in_nesting_order(const Intervals& v) {
  std::vector<std::size_t> order(v.starts.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::tuple{v.lanes[a], v.starts[a], -static_cast<std::int64_t>(v.totals[a])} <
           std::tuple{v.lanes[b], v.starts[b], -static_cast<std::int64_t>(v.totals[b])};
  });
  Intervals out;
  for (const std::size_t i : order) {
    out.lanes.push_back(v.lanes[i]);
    out.starts.push_back(v.starts[i]);
    out.totals.push_back(v.totals[i]);
  }
  return out;
}

// Parents by the definition above, for intervals already in nesting order.
std::vector<std::uint32_t> reference_parents(const Intervals& v) {
  const std::size_t n = v.starts.size();
  std::vector<std::uint32_t> parent(n, kNoIndex);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t end = v.starts[i] + v.totals[i];
    for (std::size_t j = i; j-- > 0 && v.lanes[j] == v.lanes[i];) {
      const std::uint64_t j_end = v.starts[j] + v.totals[j];
      if (v.starts[i] >= j_end || end > j_end) continue;  // j does not contain i
      bool kept = true;                                   // no interval between j and i removed j
      for (std::size_t k = j + 1; k < i && kept; ++k)
        kept = v.starts[k] < j_end && v.starts[k] + v.totals[k] <= j_end;
      if (kept) {
        parent[i] = static_cast<std::uint32_t>(j);
        break;
      }
    }
  }
  return parent;
}

}  // namespace

TEST(HostNesting, ParentsAndSelfTimesFollowTheDefinitionInEitherInputOrder) {
  std::mt19937 rng(5);
  for (int round = 0; round < 300; ++round) {
    const Intervals sorted = in_nesting_order(random_intervals(rng, 1 + rng() % 40));
    const std::size_t n = sorted.starts.size();
    const std::vector<std::uint32_t> expected = reference_parents(sorted);
    std::vector<std::uint64_t> expected_self = sorted.totals;
    for (std::size_t i = 0; i < n; ++i)
      if (expected[i] != kNoIndex)
        expected_self[expected[i]] -= std::min(expected_self[expected[i]], sorted.totals[i]);

    const HostNesting direct = nest_intervals(sorted.lanes, sorted.starts, sorted.totals);
    ASSERT_EQ(direct.parent, expected) << "round " << round;
    ASSERT_EQ(direct.self_ns, expected_self) << "round " << round;

    // The same intervals shuffled: position p holds sorted interval shuffle[p].
    std::vector<std::size_t> shuffle(n);
    std::iota(shuffle.begin(), shuffle.end(), 0u);
    std::shuffle(shuffle.begin(), shuffle.end(), rng);
    Intervals mixed;
    std::vector<std::uint32_t> position_of(n);
    for (std::size_t p = 0; p < n; ++p) {
      mixed.lanes.push_back(sorted.lanes[shuffle[p]]);
      mixed.starts.push_back(sorted.starts[shuffle[p]]);
      mixed.totals.push_back(sorted.totals[shuffle[p]]);
      position_of[shuffle[p]] = static_cast<std::uint32_t>(p);
    }
    const HostNesting sorting = nest_intervals(mixed.lanes, mixed.starts, mixed.totals);
    EXPECT_EQ(sorting.partial_overlaps, direct.partial_overlaps) << "round " << round;
    for (std::size_t p = 0; p < n; ++p) {
      const std::uint32_t want = expected[shuffle[p]];
      ASSERT_EQ(sorting.parent[p], want == kNoIndex ? kNoIndex : position_of[want])
          << "round " << round;
      ASSERT_EQ(sorting.self_ns[p], expected_self[shuffle[p]]) << "round " << round;
    }
  }
}

// count_partial_overlaps counts what nest_host_ops counts, without its per-op results. Worked out
// by hand: on thread 1, `b` (5–15) starts inside `a` (0–10) and ends after it: one partial
// overlap; `f` (12–40) starts inside `b` and ends after it: two; `c` (20–30) lies inside `f` and
// `d` (22–25) inside `c`. `e` (8–30) is alone on thread 2; on thread 1 it would start inside `b`
// and end after it, and `f` inside `e`: three in all.
TEST(HostNesting, PartialOverlapsAreCountedAloneAsInTheFullNesting) {
  std::string trace =
      cg_test::meta_line() + "\n" +
      R"({"kind":"span_start","id":"s","name":"s","start_ns":0,"span_kind":"function","measured":true})"
      "\n";
  const std::vector<std::tuple<const char*, int, int, int>> ops = {
      {"a", 1, 0, 10}, {"b", 1, 5, 10}, {"c", 1, 20, 10},
      {"d", 1, 22, 3}, {"e", 2, 8, 22}, {"f", 1, 12, 28}};
  for (const auto& [name, thread, start, total] : ops)
    trace += std::string(R"({"kind":"op","span_id":"s","op_name":")") + name +
             R"(","inputs":[],"dtype":"f32","device":"cpu","duration_ns":0,"timestamp_ns":)" +
             std::to_string(start) + R"(,"total_ns":)" + std::to_string(total) + R"(,"thread":)" +
             std::to_string(thread) + "}\n";
  trace += R"({"kind":"span_end","id":"s","duration_ns":100})"
           "\n";
  const TraceDocument doc = parse_trace_text(trace, "<test>");
  EXPECT_EQ(count_partial_overlaps(doc), 2u);
  EXPECT_EQ(nest_host_ops(doc).partial_overlaps, 2u);
}
