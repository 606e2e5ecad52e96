// Runs one read-only SQL statement with a time limit and hands its rows to a sink. SQLite is
// the engine; this only enforces the rules of `candle-graph sql`: one statement, nothing that
// writes or attaches files, interrupted after the timeout, rows past the limit counted but not
// delivered.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sqlite/sqlite_handle.hpp"

namespace candle_graph::sql {

enum class CellType : std::uint8_t { null, integer, real, text, blob };

// One value of a result row; `bytes` (text and blob) points into SQLite's buffer and is valid
// only during the sink call.
struct Cell {
  CellType type = CellType::null;
  std::int64_t integer = 0;
  double real = 0;
  std::string_view bytes;
};

class ResultSink {
 public:
  virtual ~ResultSink() = default;
  virtual void begin(std::span<const std::string> columns) = 0;
  virtual void row(std::span<const Cell> cells) = 0;
  // total: every row the statement produced; `delivered` of them went to row().
  virtual void end(std::uint64_t delivered, std::uint64_t total, bool truncated) = 0;
};

// The largest text or blob a statement may hold or build (SQLITE_LIMIT_LENGTH while it runs).
inline constexpr int kValueBytes = 64 << 20;

struct QueryOptions {
  std::optional<std::uint64_t> limit;  // rows delivered; nullopt = all
  double timeout_seconds = 30;
};

// Throws candle_graph::Error with SQLite's message (and the byte offset into the statement when
// SQLite knows it) on a SQL error, a refused writing statement, or the timeout.
void run_query(const sqlite::Connection& db, std::string_view statement,
               const QueryOptions& options, ResultSink& sink);

}  // namespace candle_graph::sql
