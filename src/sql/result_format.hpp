// The three renderings of a `sql` result: bounded JSON for agents
// (candle-graph/sql-result/1), RFC 4180 CSV for tools, and an aligned text table for humans.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include "sql/query_runner.hpp"

namespace candle_graph::sql {

inline constexpr std::string_view kSqlResultSchema = "candle-graph/sql-result/1";

using TextSink = std::function<void(std::string_view)>;

// {"schema", "columns", "rows" (arrays in column order), "returned_rows", "total_rows",
// "truncated", "limit"}. Integers are JSON integers, reals shortest round-trip (non-finite:
// null), text as JSON strings (invalid UTF-8 replaced by U+FFFD), blobs as {"hex": "…"}.
std::unique_ptr<ResultSink> json_result(TextSink out, std::optional<std::uint64_t> limit);
// RFC 4180: a header record, CRLF record ends, fields quoted when they hold `"`, `,`, CR or LF
// (quotes doubled). NULL is an empty field, a blob its hex digits.
std::unique_ptr<ResultSink> csv_result(TextSink out);
// Left-aligned text and right-aligned numbers under a header and a rule; control characters
// shown escaped (\n, \t, \xNN); cells cut to `max_width` characters with "…". NULL shows as NULL.
std::unique_ptr<ResultSink> table_result(TextSink out, std::size_t max_width = 60);

}  // namespace candle_graph::sql
