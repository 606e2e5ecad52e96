// The streaming writer must produce exactly the layout of serde_json's pretty printer, which
// nlohmann's dump(2) reproduces: nlohmann is the independent reference here.
#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "json_dom_helpers.hpp"
#include "output/json_stream.hpp"

using namespace candle_graph::output;
using candle_graph::test::write_dom;

namespace {

using OrderedJson = nlohmann::ordered_json;

std::string to_pretty(const OrderedJson& value) {
  return value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace

TEST(JsonStream, SameLayoutAsToPretty) {
  const OrderedJson dom = OrderedJson::parse(
      R"({"a":1,"b":[],"c":{},"d":[1,{"x":null,"y":[true,false]}],"e":{"z":"s\"q"},"f":-3})");
  JsonStream w;
  write_dom(w, dom);
  w.finish();
  EXPECT_EQ(w.take(), to_pretty(dom));
}

// Full buffers handed over whole (to a writing thread) instead of copied: the text is the
// reference document whatever the spare that comes back holds. The spares here come back with
// stale bytes and of every size, from empty to larger than the stream's own, as a pool of
// buffers shared with other writers would return them.
TEST(JsonStream, HandedOverBuffersCarryTheSameText) {
  OrderedJson dom = OrderedJson::array();
  for (int i = 0; i < 300; ++i)
    dom.push_back({{"id", "node-" + std::to_string(i)},
                   {"size", i * 4099},
                   {"tags", {std::string(static_cast<std::size_t>(i % 70), 't'), i % 3 == 0}}});
  dom.push_back(std::string(500, 'L'));  // larger than a buffer: the buffer grows
  std::string text;
  std::vector<std::string> pool;
  std::size_t handovers = 0, reused = 0;
  std::vector<const char*> seen;
  JsonStream w([&](std::string_view) { ADD_FAILURE() << "copied instead of handed over"; },
               JsonStyle::pretty, 64);
  w.set_handover([&](std::string& buffer, std::size_t used) {
    ASSERT_LE(used, buffer.size());
    text.append(buffer.data(), used);
    if (std::find(seen.begin(), seen.end(), buffer.data()) != seen.end()) ++reused;
    seen.push_back(buffer.data());
    pool.push_back(std::move(buffer));
    // Hand back a spare: none at first, then an old one resized and scribbled over.
    const std::size_t pick = handovers++ % 4;
    if (pick == 0 || pool.size() < 3) {
      buffer = std::string();
      return;
    }
    buffer = std::move(pool.front());
    pool.erase(pool.begin());
    buffer.assign(pick * 40, static_cast<char>('#' + pick));  // 40, 80 or 120 stale bytes
  });
  write_dom(w, dom);
  w.finish();
  EXPECT_EQ(text, to_pretty(dom));
  EXPECT_GT(handovers, 100u);
  EXPECT_GT(reused, 0u);  // buffers did circulate
}

TEST(JsonStream, FloatsUseShortestRoundTrip) {
  JsonStream w;
  w.begin_array().f64(13.0).f64(0.1).f64(1e-7).f64(0.13333333333333333).end_array();
  w.finish();
  EXPECT_EQ(w.take(), "[\n  13.0,\n  0.1,\n  1e-7,\n  0.13333333333333333\n]\n");
}

TEST(JsonStream, SortedKeyOrderAndSinkFlushing) {
  std::string sunk;
  JsonStream w([&](std::string_view s) { sunk += s; }, JsonStyle::pretty,
               8);  // tiny threshold: many flushes
  static constexpr std::array<std::string_view, 3> kKeys{"zeta", "alpha", "mid"};
  write_object(w, KeyOrder::sorted, kKeys, [&](std::size_t i, std::string_view k) {
    if (i == 2) return;  // omitted
    w.key(k).u64(i);
  });
  w.finish();
  EXPECT_EQ(sunk, "{\n  \"alpha\": 1,\n  \"zeta\": 0\n}\n");
}

// The word-at-a-time escaping scan must agree with an independent escaper (nlohmann's dump,
// which uses the same short forms and lowercase \u00XX) for a special byte at every position
// of strings of 1–24 bytes: the 8-byte path, the byte tail, and the switch between them.
TEST(JsonStream, EscapingMatchesNlohmannAtEveryPosition) {
  const std::string specials =
      std::string("\"\\\b\f\n\r\t\x01\x1f", 9) + "\xc3\xa9" + "\xe2\x82\xac";
  for (std::size_t len = 1; len <= 40; ++len)
    for (std::size_t pos = 0; pos < len; ++pos)
      for (char special : specials) {
        std::string s(len, 'a');
        s[pos] = special;
        if (static_cast<unsigned char>(special) >= 0x80) s = s.substr(0, pos) + "\xc3\xa9";
        JsonStream w;
        w.string(s);
        w.finish();
        EXPECT_EQ(w.take(), OrderedJson(s).dump() + "\n") << "len " << len << " pos " << pos;
      }
}

TEST(JsonStream, MalformedUtf8BecomesReplacementCharacter) {
  JsonStream w;
  w.string(
      "abcdefgh\xff"
      "x");
  w.finish();
  EXPECT_EQ(w.take(), "\"abcdefgh\xEF\xBF\xBDx\"\n");
}

// A value larger than the sink buffer grows the buffer; every byte still arrives in order.
TEST(JsonStream, ValueLargerThanTheBufferReachesTheSinkWhole) {
  std::string sunk;
  std::size_t pieces = 0;
  JsonStream w(
      [&](std::string_view s) {
        sunk += s;
        ++pieces;
      },
      JsonStyle::pretty, 16);
  const std::string big(1000, 'z');
  w.begin_array().string(big).u64(7).end_array();
  w.finish();
  EXPECT_EQ(sunk, "[\n  \"" + big + "\",\n  7\n]\n");
  EXPECT_GE(pieces, 2u);
}

TEST(JsonStream, SchemaKeysAndDeepIndentation) {
  JsonStream w;
  for (int i = 0; i < 40; ++i) w.begin_array();  // deeper than the 31 cached levels
  for (int i = 0; i < 40; ++i) w.end_array();
  w.finish();
  // 40 nested arrays, the innermost empty: `[` lines indented 0..38 levels, then closers.
  std::string expected;
  for (int i = 0; i < 40; ++i) expected += (i ? "\n" + std::string(2 * i, ' ') : "") + "[";
  expected += "]";
  for (int i = 38; i >= 0; --i) expected += "\n" + std::string(2 * i, ' ') + "]";
  EXPECT_EQ(w.take(), expected + "\n");
  JsonStream k;
  k.begin_object().schema_key("peak_bytes").u64(3).key("tag \"x\"").u64(4).end_object();
  k.finish();
  EXPECT_EQ(k.take(), "{\n  \"peak_bytes\": 3,\n  \"tag \\\"x\\\"\": 4\n}\n");
}

TEST(JsonStream, NumbersOfEveryLength) {
  // Both sides of every power of ten (the decimal writer splits at 10^2, 10^4 and 10^8) and the
  // extremes, against std::to_chars.
  std::vector<std::uint64_t> values{0, UINT64_MAX, UINT64_MAX - 1};
  for (std::uint64_t p = 1; p <= UINT64_MAX / 10; p *= 10)
    for (std::uint64_t v : {p - 1, p, p + 1, 2 * p - 1, 9 * p, 10 * p - 1}) values.push_back(v);
  JsonStream w;
  w.begin_array();
  std::string expected = "[";
  for (std::uint64_t v : values) {
    w.u64(v);
    char digits[24];
    expected += std::string(expected.size() > 1 ? "," : "") + "\n  " +
                std::string(digits, std::to_chars(digits, digits + sizeof digits, v).ptr);
  }
  w.end_array();
  w.finish();
  EXPECT_EQ(w.take(), expected + "\n]\n");
}

// schema_key, string and u64 have an inline path (room in the buffer, cached indentation, short
// key) and an out-of-line one. Whatever the buffer's fill level when a member starts, and at
// every depth up to 34 (past the 31 cached levels), the text must equal to_pretty of the same
// document built with nlohmann.
TEST(JsonStream, InlineAndOutOfLinePathsWriteTheSameText) {
  static constexpr std::array<std::string_view, 4> kKeys{"id", "name", "a_key_of_17_bytes",
                                                         "peak_bytes"};
  // An object at every depth 1..34, each holding an array, a string (some with escapes), a
  // number and the next level.
  OrderedJson dom = OrderedJson::object();
  std::vector<OrderedJson*> path{&dom};
  for (int depth = 0; depth < 34; ++depth) {
    OrderedJson& o = *path.back();
    // An array of objects (one empty) and plain values: objects opened as array elements.
    o["id"] = OrderedJson::array({OrderedJson::object(), OrderedJson{{"id", "x"}}, 7, "s"});
    o["name"] = depth % 3 ? "plain" : "quote \" and \\ and \x01";
    o["a_key_of_17_bytes"] = std::uint64_t{1} << (depth * 7 % 64);
    o["peak_bytes"] = OrderedJson::object();
    path.push_back(&o["peak_bytes"]);
  }
  auto write = [&](JsonStream& w, const OrderedJson& o, auto& self) -> void {
    if (o.is_string()) {
      w.string(o.get<std::string>());
      return;
    }
    if (o.is_number()) {
      w.u64(o.get<std::uint64_t>());
      return;
    }
    if (o.is_array()) {
      w.begin_array();
      for (const OrderedJson& e : o) self(w, e, self);
      w.end_array();
      return;
    }
    w.begin_object();
    for (auto it = o.begin(); it != o.end(); ++it) {
      w.schema_key(kKeys[static_cast<std::size_t>(std::find(kKeys.begin(), kKeys.end(), it.key()) -
                                                  kKeys.begin())]);
      self(w, *it, self);
    }
    w.end_object();
  };
  const std::string expected = to_pretty(dom);
  for (std::size_t flush_at : {16, 17, 64, 85, 86, 100, 257, 1 << 20}) {
    std::string sunk;
    JsonStream w([&](std::string_view s) { sunk += s; }, JsonStyle::pretty, flush_at);
    write(w, dom, write);
    w.finish();
    EXPECT_EQ(sunk, expected) << "flush_at " << flush_at;
  }
}

// The compact style is the same document without whitespace: nlohmann's dump() with no indent.
TEST(JsonStream, CompactStyleIsThePrettyDocumentWithoutWhitespace) {
  const OrderedJson dom = OrderedJson::parse(
      R"({"a":1,"b":[],"c":{},"d":[1,{"x":null,"y":[true,false]}],"e":{"z":"s\"q"},"f":-3,)"
      R"("g":[[[]],{"h":{"i":"j k"}}]})");
  JsonStream w({}, JsonStyle::compact);
  write_dom(w, dom);
  EXPECT_EQ(w.take(), dom.dump());
  JsonStream keys({}, JsonStyle::compact);
  keys.begin_object().schema_key("n").u64(7).key("t").string("v").end_object();
  EXPECT_EQ(keys.take(), R"({"n":7,"t":"v"})");
}

// shorten_strings_over: a value longer than the bound is written as the shortener's text, in the
// inline path (right after a key) and the other (an array element) alike; a value of exactly the
// bound and every key are written whole. The expected text is built here with nlohmann::json.
TEST(JsonStream, StringsOverTheBoundAreShortenedKeysNever) {
  JsonStream w({}, JsonStyle::compact);
  w.shorten_strings_over(8,
                         [](std::string_view s) { return "<" + std::to_string(s.size()) + ">"; });
  const std::string long_key(20, 'k');
  w.begin_object();
  w.key(long_key).string("123456789");  // 9 bytes: over
  w.key("at").string("12345678");       // 8 bytes: at the bound
  w.key("list").begin_array().string("abcdefghij").string("short").end_array();
  w.end_object();
  nlohmann::ordered_json expected = nlohmann::ordered_json::object();
  expected[long_key] = "<9>";
  expected["at"] = "12345678";
  expected["list"] = {"<10>", "short"};
  EXPECT_EQ(w.take(), expected.dump());
}
