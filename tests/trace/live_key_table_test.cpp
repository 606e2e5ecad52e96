// detail::LiveKeyTable must behave like a std::map keyed by (id, device) under alloc/free churn:
// ids the slot settles alone (≤ 7 bytes, including NUL bytes and ids that differ only by a
// trailing NUL), ids it cannot (longer ones sharing their first 7 bytes) and keys it must not
// settle (a device that only the caller's comparison tells apart), probe runs that wrap,
// backward-shift deletion and growth.
#include <gtest/gtest.h>

#include <algorithm>
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
  std::uint32_t device;
};

// Ids built to defeat the slot: equal 7-byte prefixes, NULs, prefixes of each other, lengths
// around the 7 bytes a slot holds.
std::vector<std::string> tricky_ids() {
  std::vector<std::string> ids = {"t",
                                  std::string("t\0", 2),
                                  std::string("t\0\0", 3),
                                  "t1",
                                  "t123456",
                                  "t1234567",
                                  "t12345678",
                                  "t123456x",
                                  "t1234567y",
                                  "abcdefg",
                                  std::string("abcdefg\0", 8),
                                  "abcdefgh",
                                  "abcdefgi",
                                  ""};
  for (int i = 0; i < 30; ++i) ids.push_back("shared-prefix-" + std::to_string(i));
  for (int i = 0; i < 30; ++i) ids.push_back("t" + std::to_string(i * 7919));
  return ids;
}

// Runs the churn with ids on `devices` devices; keys settle only when there is one.
void churn(std::uint32_t devices, std::uint32_t seed) {
  const std::vector<std::string> ids = tricky_ids();
  std::mt19937 rng(seed);
  std::vector<Probe> events(20000);
  for (auto& e : events) e = {ids[rng() % ids.size()], static_cast<std::uint32_t>(rng() % devices)};
  auto same = [&](std::uint32_t a, std::uint32_t b) {
    return events[a].id == events[b].id && events[a].device == events[b].device;
  };
  // The salt is the device for one half of the devices and 0 for the other: equal hashes for
  // keys that only `same` tells apart.
  auto key = [&](std::uint32_t k) {
    return LiveKey::of(events[k].id, events[k].device % 2 ? events[k].device : 0, devices == 1);
  };
  struct Value {
    std::uint32_t tag;
  };
  LiveKeyTable<Value> table;
  std::map<std::pair<std::string, std::uint32_t>, std::uint32_t> ref;  // (id, device) → event
  std::size_t max_live = 0;
  for (std::uint32_t k = 0; k < events.size(); ++k) {
    const auto ref_key = std::make_pair(events[k].id, events[k].device);
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
    max_live = std::max(max_live, ref.size());
  }
  std::map<std::pair<std::string, std::uint32_t>, std::uint32_t> seen;
  table.for_each([&](const auto& entry) {
    seen[{events[entry.event].id, events[entry.event].device}] = entry.event;
  });
  EXPECT_EQ(seen, ref);
  EXPECT_GT(max_live, 32u);  // the table grew: it starts with 64 slots and stays half empty
}

}  // namespace

TEST(LiveKeyTable, MatchesAMapUnderRandomChurnOnOneDevice) {
  churn(1, 7);
}

TEST(LiveKeyTable, MatchesAMapUnderRandomChurnOnFourDevices) {
  churn(4, 11);
}

TEST(LiveKeyTable, KeysSettleExactlyTheShortIdsTheCallerAllows) {
  EXPECT_TRUE(LiveKey::of("t123456").settles);
  EXPECT_FALSE(LiveKey::of("t1234567").settles);  // 8 bytes
  EXPECT_FALSE(LiveKey::of("t1", 0, false).settles);
  EXPECT_NE(LiveKey::of("t").word, LiveKey::of(std::string("t\0", 2)).word);
  EXPECT_NE(LiveKey::of("t1", 0).hash, LiveKey::of("t1", 1).hash);
  EXPECT_EQ(LiveKey::of("t1", 2).word, LiveKey::of("t1", 5).word);
}

// A slot settles a short id by its word alone when the hashes agree, so the word must tell every
// pair of distinct short ids apart, hash or no hash.
TEST(LiveKeyTable, TheWordAloneTellsShortIdsApart) {
  std::vector<std::string> ids = {
      "",        "t",      std::string("t\0", 2),     std::string("\0", 1), "abcdefg", "abcdefX",
      "Xbcdefg", "abcdef", std::string("abcdef\0", 7)};
  for (int i = 0; i < 300; ++i) ids.push_back("t" + std::to_string(i * 104729 % 1000000));
  std::map<std::uint64_t, std::string> seen;
  for (const std::string& id : ids) {
    const LiveKey k = LiveKey::of(id, 9);
    ASSERT_TRUE(k.settles) << id;
    const auto [it, inserted] = seen.emplace(k.word, id);
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
    for (std::size_t p = 0; p < count; ++p) {
      const LiveKey k = keys.next(p, table), expected = LiveKey::of(ids[p]);
      ASSERT_TRUE(k.word == expected.word && k.hash == expected.hash) << count << " " << p;
    }
  }
}
