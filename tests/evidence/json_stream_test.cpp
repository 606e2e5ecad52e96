// The streaming writer must produce exactly to_pretty's layout (serde_json pretty printing).
#include <gtest/gtest.h>

#include "output/json_document.hpp"
#include "output/json_stream.hpp"

using namespace candle_graph::output;

TEST(JsonStream, SameLayoutAsToPretty) {
  const OrderedJson dom = OrderedJson::parse(
      R"({"a":1,"b":[],"c":{},"d":[1,{"x":null,"y":[true,false]}],"e":{"z":"s\"q"},"f":-3})");
  JsonStream w;
  w.json(dom);
  w.finish();
  EXPECT_EQ(w.take(), to_pretty(dom));
}

TEST(JsonStream, FloatsUseShortestRoundTrip) {
  JsonStream w;
  w.begin_array().f64(13.0).f64(0.1).f64(1e-7).f64(0.13333333333333333).end_array();
  w.finish();
  EXPECT_EQ(w.take(), "[\n  13.0,\n  0.1,\n  1e-7,\n  0.13333333333333333\n]\n");
}

TEST(JsonStream, SortedKeyOrderAndSinkFlushing) {
  std::string sunk;
  JsonStream w([&](std::string_view s) { sunk += s; }, 8);  // tiny threshold: many flushes
  static constexpr std::array<std::string_view, 3> kKeys{"zeta", "alpha", "mid"};
  write_object(w, KeyOrder::sorted, kKeys, [&](std::size_t i, std::string_view k) {
    if (i == 2) return;  // omitted
    w.key(k).u64(i);
  });
  w.finish();
  EXPECT_EQ(sunk, "{\n  \"alpha\": 1,\n  \"zeta\": 0\n}\n");
}
