// memory::sorted_order (trace6.md §7.1 step 1) sorts in two passes (integer key, then tensor_id
// within runs of equal keys); it must give exactly the order of one stable sort by the full key
// (timestamp, alloc before free, tensor_id), which is the reference here.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "memory/memory_order.hpp"

using namespace candle_graph;

namespace {

std::vector<std::uint32_t> reference_order(const std::vector<MemoryEvent>& events) {
  std::vector<std::uint32_t> order(events.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    const MemoryEvent& x = events[a];
    const MemoryEvent& y = events[b];
    if (x.timestamp_ns != y.timestamp_ns) return x.timestamp_ns < y.timestamp_ns;
    if (x.action != y.action) return x.action == MemoryAction::alloc;
    return x.tensor_id < y.tensor_id;
  });
  return order;
}

// Few timestamps and few ids make long runs of equal keys and equal ids (stability matters).
std::vector<MemoryEvent> random_events(std::mt19937& rng, std::size_t n, int timestamps,
                                       bool time_ordered, const std::vector<std::string>& ids) {
  std::vector<MemoryEvent> events(n);
  std::uint64_t t = 0;
  for (auto& e : events) {
    t = time_ordered ? t + rng() % 2 : rng() % timestamps;
    e.timestamp_ns = t;
    e.action = rng() % 2 ? MemoryAction::alloc : MemoryAction::free;
    e.tensor_id = ids[rng() % ids.size()];
  }
  return events;
}

}  // namespace

TEST(MemoryOrder, EqualsOneStableSortByTheFullKey) {
  const std::vector<std::string> ids = {"a", "b", "t10", "t2", "t2x", "", "z", "t1"};
  std::mt19937 rng(7);
  for (int round = 0; round < 400; ++round) {
    const bool time_ordered = round % 2 == 0;  // the usual probe stream, and a shuffled one
    const auto events = random_events(rng, 1 + rng() % 300, 1 + round % 9, time_ordered, ids);
    ASSERT_EQ(memory::sorted_order(events), reference_order(events)) << "round " << round;
  }
}

// A stream in time order for a long stretch, its instants already reordered, and then one event
// from the past: the order must start again from the whole stream.
TEST(MemoryOrder, AStreamThatLeavesTimeOrderLateEqualsTheStableSort) {
  const std::vector<std::string> ids = {"b", "a", "t1", "t0"};
  std::mt19937 rng(11);
  for (int round = 0; round < 200; ++round) {
    auto events = random_events(rng, 2 + rng() % 200, 1, true, ids);
    MemoryEvent late = events[rng() % events.size()];
    late.timestamp_ns = rng() % (events.back().timestamp_ns + 1);
    if (late.timestamp_ns == events.back().timestamp_ns) continue;  // still in time order
    events.insert(events.end() - static_cast<std::ptrdiff_t>(rng() % 2), late);
    ASSERT_EQ(memory::sorted_order(events), reference_order(events)) << "round " << round;
  }
}

TEST(MemoryOrder, EmptyAndSingleEvent) {
  EXPECT_TRUE(memory::sorted_order({}).empty());
  std::vector<MemoryEvent> one(1);
  EXPECT_EQ(memory::sorted_order(one), std::vector<std::uint32_t>{0});
}
