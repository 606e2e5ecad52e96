// memory::LiveTable must behave like a std::map<tensor_id, event> under alloc/free churn,
// including probe runs that wrap around the end of the table and backward-shift deletion.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

#include "memory/live_table.hpp"

using namespace candle_graph;

TEST(LiveTable, MatchesAMapUnderRandomChurn) {
  // 3000 events over 40 tensor ids: ids repeat (re-allocation replaces), frees of ids that are
  // not live return kNoIndex. The reference is an ordinary std::map driven identically.
  std::vector<std::string> ids;
  for (int i = 0; i < 40; ++i) ids.push_back("t" + std::to_string(i * 7919));
  std::vector<MemoryEvent> events(3000);
  std::mt19937 rng(42);
  for (auto& e : events) e.tensor_id = ids[rng() % ids.size()];
  // At most 8 live of 40 distinct ids in the initial 64-slot table: wrapping runs and
  // backward shifts. (Growth is covered by the test below.)
  memory::LiveTable table(events);
  std::map<std::string_view, std::uint32_t> ref;
  for (std::uint32_t k = 0; k < events.size(); ++k) {
    const std::string_view id = events[k].tensor_id;
    const bool alloc = (rng() % 2 == 0) && (ref.size() < 8 || ref.count(id));
    if (alloc) {
      table.put(k);
      ref[id] = k;
    } else {
      auto it = ref.find(id);
      const std::uint32_t expected = it == ref.end() ? kNoIndex : it->second;
      if (it != ref.end()) ref.erase(it);
      ASSERT_EQ(table.take(id), expected) << "event " << k;
    }
    ASSERT_EQ(table.size(), ref.size());
  }
  std::map<std::string_view, std::uint32_t> seen;
  table.for_each([&](std::uint32_t k) { seen[events[k].tensor_id] = k; });
  EXPECT_EQ(seen, ref);
  table.clear();
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.take(ids[0]), kNoIndex);
}

// Growing past the initial 64 slots keeps every entry findable (1000 live ids, then all freed).
TEST(LiveTable, GrowsAndKeepsEveryEntry) {
  std::vector<std::string> ids;
  for (int i = 0; i < 1000; ++i) ids.push_back("tensor" + std::to_string(i));
  std::vector<MemoryEvent> events(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) events[i].tensor_id = ids[i];
  memory::LiveTable table(events);
  for (std::uint32_t k = 0; k < events.size(); ++k) table.put(k);
  EXPECT_EQ(table.size(), 1000u);
  for (std::uint32_t k = 0; k < events.size(); k += 2) EXPECT_EQ(table.take(ids[k]), k);
  for (std::uint32_t k = 1; k < events.size(); k += 2) EXPECT_EQ(table.take(ids[k]), k);
  EXPECT_EQ(table.size(), 0u);
}
