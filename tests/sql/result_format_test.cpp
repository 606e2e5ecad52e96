// The three result renderings on hand-made rows (library level, no process): RFC 4180 quoting,
// the table's alignment and escaping, and JSON values of every SQLite type. Expected texts are
// written from the RFC 4180 rules and the documented table layout (docs/sql.md), by hand.
#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sql/result_format.hpp"

namespace {

using candle_graph::sql::Cell;
using candle_graph::sql::CellType;

std::string render(std::unique_ptr<candle_graph::sql::ResultSink> sink, std::string& out,
                   const std::vector<std::string>& columns,
                   const std::vector<std::vector<Cell>>& rows, std::uint64_t total) {
  sink->begin(columns);
  for (const auto& r : rows) sink->row(r);
  sink->end(rows.size(), total, rows.size() < total);
  return out;
}

Cell text(std::string_view s) {
  return {CellType::text, 0, 0, s};
}
Cell integer(std::int64_t v) {
  return {CellType::integer, v, 0, {}};
}
Cell real(double v) {
  return {CellType::real, 0, v, {}};
}
Cell null() {
  return {};
}
Cell blob(std::string_view s) {
  return {CellType::blob, 0, 0, s};
}

TEST(SqlResultFormat, CsvFollowsRfc4180) {
  std::string out;
  auto sink = candle_graph::sql::csv_result([&](std::string_view p) { out += p; });
  render(
      std::move(sink), out, {"name", "n,x"},
      {{text("plain"), integer(-3)},
       {text("a \"q\", b"), real(0.5)},
       {text("line\r\nbreak"), null()},
       {blob(std::string_view("\x00\xff", 2)), integer(std::numeric_limits<std::int64_t>::max())}},
      4);
  EXPECT_EQ(out,
            "name,\"n,x\"\r\n"
            "plain,-3\r\n"
            "\"a \"\"q\"\", b\",0.5\r\n"
            "\"line\r\nbreak\",\r\n"
            "00ff,9223372036854775807\r\n");
}

TEST(SqlResultFormat, TableAlignsAndEscapes) {
  std::string out;
  auto sink = candle_graph::sql::table_result([&](std::string_view p) { out += p; }, 8);
  render(std::move(sink), out, {"name", "ns"},
         {{text("ab\tc"), integer(5)}, {text("überlange Zeile"), integer(12345)}}, 2);
  // Column 1 is 9 characters wide ("überlang" + "…"), column 2 right-aligned to 5.
  EXPECT_EQ(out,
            "name          ns\n"
            "---------  -----\n"
            "ab\\tc          5\n"
            "überlang…  12345\n"
            "(2 rows)\n");
}

TEST(SqlResultFormat, TableCellsShowC1ControlsAndCountEachEscapeAsOneCharacter) {
  std::string out;
  auto sink = candle_graph::sql::table_result([&](std::string_view p) { out += p; }, 4);
  // U+009B is the one-byte CSI some terminals obey: shown as \u009b, one of the cell's 4
  // characters, like the ESC before it; U+00A0 (just past the C1 range) stays as it is.
  render(std::move(sink), out, {"n"},
         {{text("\x1b\xC2\x9B"
                "ab\xC2\xA0")}},
         1);
  EXPECT_EQ(out,
            "n\n"
            "-------------\n"  // 13 columns: \x1b (4) + \u009b (6) + ab (2) + … (1)
            "\\x1b\\u009bab…\n"
            "(1 row)\n");
}

TEST(SqlResultFormat, JsonTypesAndBounds) {
  std::string out;
  auto sink = candle_graph::sql::json_result([&](std::string_view p) { out += p; }, 2);
  render(
      std::move(sink), out, {"a", "b", "c", "d", "e"},
      {{integer(-1), real(1.5), text("x\x01\"y"), null(), blob("\x01")},
       {integer(0), real(std::numeric_limits<double>::infinity()), text("\xff"), null(), blob("")}},
      7);
  const nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["schema"], "candle-graph/sql-result/1");
  EXPECT_EQ(j["rows"][0], nlohmann::json::parse(R"([-1, 1.5, "x\u0001\"y", null, {"hex": "01"}])"));
  // Infinity has no JSON form (null); invalid UTF-8 becomes U+FFFD.
  EXPECT_EQ(j["rows"][1], nlohmann::json::parse(R"([0, null, "\ufffd", null, {"hex": ""}])"));
  EXPECT_EQ(j["returned_rows"], 2);
  EXPECT_EQ(j["total_rows"], 7);
  EXPECT_EQ(j["truncated"], true);
  EXPECT_EQ(j["limit"], 2);
}

}  // namespace
