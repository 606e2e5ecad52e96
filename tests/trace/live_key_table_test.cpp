// detail::LiveKeyTable must behave like a std::map keyed by (id, aux) under alloc/free churn:
// ids the slot settles alone (≤ 8 bytes, including NUL bytes and ids that differ only by a
// trailing NUL) and ids it cannot (longer ones sharing their first 8 bytes, and aux numbers
// beyond what a slot holds exactly), probe runs that wrap, backward-shift deletion and growth.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <utility>

#include "trace/live_key_table.hpp"

using namespace candle_graph;
using detail::LiveKey;
using detail::LiveKeyTable;

namespace {

struct Probe {
  std::string id;
  std::uint32_t aux;
};

// Ids built to defeat the slot: equal 8-byte prefixes, NULs, prefixes of each other.
std::vector<std::string> tricky_ids() {
  std::vector<std::string> ids = {"t",         std::string("t\0", 2), std::string("t\0\0", 3),
                                  "t1",        "t12345678",           "t1234567",
                                  "t1234567x", "t12345678y",          "abcdefgh",
                                  "abcdefghi", "abcdefghj",           ""};
  for (int i = 0; i < 30; ++i) ids.push_back("shared-prefix-" + std::to_string(i));
  for (int i = 0; i < 30; ++i) ids.push_back("t" + std::to_string(i * 7919));
  return ids;
}

}  // namespace

TEST(LiveKeyTable, MatchesAMapUnderRandomChurn) {
  const std::vector<std::string> ids = tricky_ids();
  // aux: two exact numbers and two beyond kMaxAux (capped in the slot: only `same` tells them
  // apart).
  const std::uint32_t auxes[] = {0, 1, LiveKey::kMaxAux, LiveKey::kMaxAux + 5};
  std::mt19937 rng(7);
  std::vector<Probe> events(20000);
  for (auto& e : events) e = {ids[rng() % ids.size()], auxes[rng() % 4]};
  auto same = [&](std::uint32_t a, std::uint32_t b) {
    return events[a].id == events[b].id && events[a].aux == events[b].aux;
  };
  auto key = [&](std::uint32_t k) { return LiveKey::of(events[k].id, events[k].aux); };

  struct Value {
    std::uint32_t tag;
  };
  LiveKeyTable<Value> table;
  std::map<std::pair<std::string, std::uint32_t>, std::uint32_t> ref;  // key → event
  for (std::uint32_t k = 0; k < events.size(); ++k) {
    const auto ref_key = std::make_pair(events[k].id, events[k].aux);
    const auto it = ref.find(ref_key);
    const std::uint32_t live = it == ref.end() ? kNoIndex : it->second;
    switch (rng() % 3) {
      case 0: {  // insert: keeps the live entry
        const auto kept = table.insert(k, key(k), Value{k * 3}, same);
        ASSERT_EQ(kept.event, live) << "event " << k;
        if (live != kNoIndex) {
          ASSERT_EQ(kept.value.tag, live * 3);
        }
        if (live == kNoIndex) ref[ref_key] = k;
        break;
      }
      case 1: {  // put: replaces the live entry
        const auto replaced = table.put(k, key(k), Value{k * 3}, same);
        ASSERT_EQ(replaced.event, live) << "event " << k;
        if (live != kNoIndex) {
          ASSERT_EQ(replaced.value.tag, live * 3);
        }
        ref[ref_key] = k;
        break;
      }
      default: {  // take
        const auto taken = table.take(key(k), k, same);
        ASSERT_EQ(taken.event, live) << "event " << k;
        if (live != kNoIndex) {
          ASSERT_EQ(taken.value.tag, live * 3);
          ref.erase(it);
        }
      }
    }
    ASSERT_EQ(table.size(), ref.size());
  }
  std::map<std::pair<std::string, std::uint32_t>, std::uint32_t> seen;
  table.for_each([&](const auto& entry) {
    seen[{events[entry.event].id, events[entry.event].aux}] = entry.event;
  });
  EXPECT_EQ(seen, ref);
  EXPECT_GT(ref.size(), 64u);  // the table grew past its first 64 slots
}

TEST(LiveKeyTable, KeysSettleExactlyTheShortIdsWithAnExactAux) {
  EXPECT_TRUE(LiveKey::of("t1234567").settles());
  EXPECT_TRUE(LiveKey::of("t12345678", 3).settles() == false);  // 9 bytes
  EXPECT_FALSE(LiveKey::of("t1", LiveKey::kMaxAux).settles());
  EXPECT_FALSE(LiveKey::of("t") == LiveKey::of(std::string("t\0", 2)));
  EXPECT_FALSE(LiveKey::of("t1", 0) == LiveKey::of("t1", 1));
  EXPECT_TRUE(LiveKey::of("t1", 2) == LiveKey::of("t1", 2));
}

// A slot settles a short id by (tag, prefix) alone when the hashes agree, so those two must tell
// every pair of distinct short ids apart, hash or no hash.
TEST(LiveKeyTable, TagAndPrefixAloneTellShortIdsApart) {
  std::vector<std::string> ids = {"",
                                  "t",
                                  std::string("t\0", 2),
                                  std::string("\0", 1),
                                  "abcdefgh",
                                  "abcdefgX",
                                  "Xbcdefgh",
                                  "abcdefg",
                                  std::string("abcdefg\0", 8)};
  for (int i = 0; i < 300; ++i) ids.push_back("t" + std::to_string(i * 104729 % 10000000));
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::string> seen;
  for (const std::string& id : ids) {
    const LiveKey k = LiveKey::of(id, 9);
    ASSERT_TRUE(k.settles()) << id;
    const auto [it, inserted] = seen.emplace(std::make_pair(k.tag, k.prefix), id);
    EXPECT_TRUE(inserted || it->second == id) << "`" << id << "` and `" << it->second << "`";
  }
}

TEST(LiveKeyTable, KeysAheadHandsOutEveryKeyInOrder) {
  LiveKeyTable<> table;
  std::vector<std::string> ids;
  for (int i = 0; i < 50; ++i) ids.push_back("id" + std::to_string(i));
  for (std::size_t count : {0u, 1u, 15u, 16u, 17u, 50u}) {
    auto key_at = [&](std::size_t p) { return LiveKey::of(ids[p]); };
    detail::KeysAhead keys(count, key_at, table);
    for (std::size_t p = 0; p < count; ++p)
      ASSERT_TRUE(keys.next(p, table) == LiveKey::of(ids[p])) << count << " " << p;
  }
}
