// PointerTable (src/pointer_table.hpp), the recorder's open-addressing table: checked against
// std::unordered_map as the reference on a random mix of inserts, erases and lookups whose keys
// are forced to collide (few distinct home slots), so that probe runs wrap around the array and
// backward-shift deletion has to move entries.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

#include "../src/pointer_table.hpp"

namespace {

using candle_graph::libtorch::detail::PointerTable;

const void* key_of(std::uint64_t n) {
  return reinterpret_cast<const void*>(static_cast<std::uintptr_t>(n));
}

TEST(PointerTable, MatchesUnorderedMapUnderRandomInsertEraseAndFind) {
  std::mt19937_64 rng(7);
  PointerTable<std::uint64_t> table(16);
  std::unordered_map<const void*, std::uint64_t> reference;
  // 40 distinct keys for a table that grows to 64-128 slots: long runs, wrap-arounds, and keys
  // that share a home slot.
  std::vector<const void*> keys;
  for (std::uint64_t k = 1; k <= 40; ++k) keys.push_back(key_of(k * 64));
  for (int step = 0; step < 20000; ++step) {
    const void* key = keys[rng() % keys.size()];
    const auto action = rng() % 3;
    if (action == 0 && !reference.contains(key)) {
      table.insert(key, static_cast<std::uint64_t>(step));
      reference[key] = static_cast<std::uint64_t>(step);
    } else if (action == 1) {
      table.erase(key);
      reference.erase(key);
    }
    ASSERT_EQ(table.size(), reference.size()) << "step " << step;
    for (const void* k : keys) {
      const std::uint64_t* found = table.find(k);
      const auto it = reference.find(k);
      ASSERT_EQ(found != nullptr, it != reference.end()) << "step " << step;
      if (found != nullptr) {
        ASSERT_EQ(*found, it->second) << "step " << step;
      }
    }
  }
}

TEST(PointerTable, GrowsWhenHalfFullAndKeepsEveryEntry) {
  PointerTable<int> table(16);
  for (int i = 1; i <= 1000; ++i) table.insert(key_of(static_cast<std::uint64_t>(i) * 16), i);
  EXPECT_EQ(table.size(), 1000u);
  int sum = 0, count = 0;
  table.for_each([&](const void*, int v) {
    sum += v;
    ++count;
  });
  EXPECT_EQ(count, 1000);
  EXPECT_EQ(sum, 1000 * 1001 / 2);  // Gauss: every value present exactly once
  for (int i = 1; i <= 1000; ++i) {
    const int* v = table.find(key_of(static_cast<std::uint64_t>(i) * 16));
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(*v, i);
  }
  EXPECT_EQ(table.find(key_of(8)), nullptr);
  table.clear();
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.find(key_of(16)), nullptr);
}

}  // namespace
