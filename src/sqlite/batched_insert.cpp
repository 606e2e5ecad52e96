#include "sqlite/batched_insert.hpp"

#include <limits>

#include "candle_graph/error.hpp"

namespace candle_graph::sqlite {

namespace {

std::string insert_sql(std::string_view table, int columns, int rows) {
  std::string sql = "INSERT INTO ";
  sql += table;
  sql += " VALUES ";
  for (int r = 0; r < rows; ++r) {
    sql += r ? ",(" : "(";
    for (int c = 0; c < columns; ++c) sql += c ? ",?" : "?";
    sql += ')';
  }
  return sql;
}

}  // namespace

BatchedInsert::BatchedInsert(const Connection& db, std::string_view table, int columns,
                             std::optional<std::uint64_t> run_rank)
    : db_(db), table_(table), columns_(columns + 1), run_rank_(run_rank) {
  values_.reserve(static_cast<std::size_t>(columns) * kRowsPerStep);
}

BatchedInsert::~BatchedInsert() noexcept(false) {
  if (std::uncaught_exceptions() == uncaught_) flush();
}

BatchedInsert& BatchedInsert::owned(std::string_view s) {
  copies_.emplace_back(s);
  Value v;
  v.kind = Value::Kind::owned;
  v.i = static_cast<std::int64_t>(copies_.size() - 1);
  return add(v);
}

BatchedInsert& BatchedInsert::u64(std::uint64_t v) {
  if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    return f64(static_cast<double>(v));
  return i64(static_cast<std::int64_t>(v));
}

void BatchedInsert::done() {
  u64(run_rank_);
  if (values_.size() != static_cast<std::size_t>(columns_) * static_cast<std::size_t>(rows_ + 1))
    throw Error(db_.path(), 0,
                "internal error: a row of " + table_ + " has the wrong column count");
  if (++rows_ == kRowsPerStep) flush();
}

Statement& BatchedInsert::statement_for(int rows) {
  if (rows == kRowsPerStep) {
    if (!full_) full_.emplace(db_, insert_sql(table_, columns_, rows));
    return *full_;
  }
  if (!tail_ || tail_rows_ != rows) {
    tail_.reset();
    tail_.emplace(db_, insert_sql(table_, columns_, rows));
    tail_rows_ = rows;
  }
  return *tail_;
}

void BatchedInsert::flush() {
  if (rows_ == 0) return;
  Statement& stmt = statement_for(rows_);
  for (std::size_t k = 0; k < values_.size(); ++k) {
    const Value& v = values_[k];
    const int i = static_cast<int>(k) + 1;
    switch (v.kind) {
      case Value::Kind::null:
        stmt.bind_null(i);
        break;
      case Value::Kind::integer:
        stmt.bind_i64(i, v.i);
        break;
      case Value::Kind::real:
        stmt.bind_f64(i, v.d);
        break;
      case Value::Kind::text:
        stmt.bind_text(i, v.s);
        break;
      case Value::Kind::owned:
        stmt.bind_text(i, std::string_view(copies_[static_cast<std::size_t>(v.i)]));
        break;
    }
  }
  rows_ = 0;
  values_.clear();
  stmt.run();
  copies_.clear();
}

}  // namespace candle_graph::sqlite
