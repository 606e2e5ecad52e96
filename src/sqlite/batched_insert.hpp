// Inserts into one table, many rows per statement: `INSERT INTO t VALUES (?,…),(?,…),…`. A
// statement step costs SQLite the same setup and teardown (cursor, transaction check, halt) for
// one row as for 128, and the loader inserts millions of rows, so rows are collected and stepped
// kRowsPerStep at a time, in the order they were added (rowids, and so the table, are those of
// one INSERT per row). Positional binds: `insert.text(a).u64(b).done()` per row. Every table ends
// with the rank of the run its rows belong to (docs/sql.md): given once, added by done().
//
// Text added with text(string_view) is bound without a copy when the rows are stepped, so its
// bytes must live until then (views into the trace document or the packet); text in a buffer the
// caller reuses for the next row goes through owned(), which copies it.
#pragma once

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "candle_graph/trace_document.hpp"
#include "sqlite/sqlite_handle.hpp"

namespace candle_graph::sqlite {

class BatchedInsert {
 public:
  static constexpr int kRowsPerStep = 128;

  // `columns`: the row's own columns, before the run's rank (NULL when the run states none).
  BatchedInsert(const Connection& db, std::string_view table, int columns,
                std::optional<std::uint64_t> run_rank);
  BatchedInsert(const BatchedInsert&) = delete;
  BatchedInsert& operator=(const BatchedInsert&) = delete;
  // Inserts the rows still collected, unless an exception is on its way out (the load failed
  // and the transaction will not be committed).
  ~BatchedInsert() noexcept(false);

  BatchedInsert& text(std::string_view s) { return add(Value::text(s)); }
  // A string that outlives the rows (the document's, the packet's); never a temporary.
  BatchedInsert& text(const std::string& s) { return text(std::string_view(s)); }
  BatchedInsert& text(std::string&& s) = delete;
  BatchedInsert& text(const std::optional<std::string_view>& s) { return s ? text(*s) : null(); }
  BatchedInsert& owned(std::string_view s);  // copied: the caller reuses the buffer
  BatchedInsert& opt_owned(const std::optional<std::string>& s) { return s ? owned(*s) : null(); }
  BatchedInsert& i64(std::int64_t v) { return add(Value::integer(v)); }
  // SQLite integers are signed 64-bit: a value above INT64_MAX is stored as REAL (the nearest
  // double), as Statement::bind_u64 does.
  BatchedInsert& u64(std::uint64_t v);
  BatchedInsert& u64(const std::optional<std::uint64_t>& v) { return v ? u64(*v) : null(); }
  BatchedInsert& f64(double v) { return add(Value::real(v)); }
  BatchedInsert& f64(const std::optional<double>& v) { return v ? f64(*v) : null(); }
  BatchedInsert& boolean(bool v) { return i64(v ? 1 : 0); }
  BatchedInsert& boolean(const std::optional<bool>& v) { return v ? boolean(*v) : null(); }
  BatchedInsert& null() { return add(Value{}); }
  // A span or op index of the document; kNoIndex (no such span) becomes NULL.
  BatchedInsert& index(std::uint32_t v) { return v == kNoIndex ? null() : i64(v); }
  // Ends the row (every column added); inserts the collected rows when there are kRowsPerStep.
  void done();
  // Inserts the rows collected so far.
  void flush();

 private:
  struct Value {
    enum class Kind : std::uint8_t { null, integer, real, text, owned };
    Kind kind = Kind::null;
    std::int64_t i = 0;
    double d = 0;
    std::string_view s;
    static Value integer(std::int64_t v) { return {Kind::integer, v, 0, {}}; }
    static Value real(double v) { return {Kind::real, 0, v, {}}; }
    static Value text(std::string_view v) { return {Kind::text, 0, 0, v}; }
  };
  BatchedInsert& add(const Value& v) {
    values_.push_back(v);
    return *this;
  }
  Statement& statement_for(int rows);

  const Connection& db_;
  std::string table_;
  int columns_;  // the statement's, the rank included
  std::optional<std::uint64_t> run_rank_;
  std::vector<Value> values_;        // the collected rows, row by row
  std::vector<std::string> copies_;  // owned() text of the collected rows
  std::optional<Statement> full_;    // kRowsPerStep rows
  std::optional<Statement> tail_;    // fewer, at the end
  int tail_rows_ = 0;
  int rows_ = 0;
  int uncaught_ = std::uncaught_exceptions();
};

}  // namespace candle_graph::sqlite
