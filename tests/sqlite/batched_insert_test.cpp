// Many rows per INSERT statement (sqlite/batched_insert.hpp): every row lands, in order, with the
// values and types one INSERT per row gives. Expected rows are built in the test and read back
// with plain SELECTs through SQLite itself.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "candle_graph/error.hpp"
#include "sqlite/batched_insert.hpp"
#include "sqlite/sqlite_handle.hpp"

namespace {

using candle_graph::sqlite::BatchedInsert;
using candle_graph::sqlite::Connection;
using candle_graph::sqlite::Statement;

constexpr int kFlags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;

void create_table(const Connection& db) {
  db.exec("CREATE TABLE t (k INTEGER, name TEXT, big, maybe INTEGER, rank INTEGER)");
}

// Every row as text: "rowid|k|name|typeof(big):big|maybe|rank".
std::vector<std::string> rows_of(const Connection& db) {
  Statement q(db,
              "SELECT rowid, k, name, typeof(big) || ':' || big, coalesce(maybe, 'null'), "
              "coalesce(rank, 'null') FROM t ORDER BY rowid");
  std::vector<std::string> out;
  while (q.step()) {
    std::string row;
    for (int c = 0; c < 6; ++c) {
      if (c) row += '|';
      row += reinterpret_cast<const char*>(sqlite3_column_text(q.get(), c));
    }
    out.push_back(row);
  }
  return out;
}

TEST(BatchedInsert, EveryRowLandsInOrderAcrossFullStepsAndTheTail) {
  const Connection db(":memory:", kFlags);
  create_table(db);
  // 2 full steps and a tail of 6; the name buffer is reused for every row (owned() copies it).
  const int n = 2 * BatchedInsert::kRowsPerStep + 6;
  std::vector<std::string> expected;
  {
    BatchedInsert insert(db, "t", 4, 7);  // every row ends with the run's rank, 7
    std::string name;
    for (int i = 0; i < n; ++i) {
      name = "row-" + std::to_string(i);
      insert.i64(i).owned(name).u64(static_cast<std::uint64_t>(i) * 3);
      if (i % 5 == 0)
        insert.null();
      else
        insert.boolean(i % 2 == 0);
      insert.done();
      expected.push_back(std::to_string(i + 1) + "|" + std::to_string(i) + "|row-" +
                         std::to_string(i) + "|integer:" + std::to_string(i * 3) + "|" +
                         (i % 5 == 0   ? "null"
                          : i % 2 == 0 ? "1"
                                       : "0") +
                         "|7");
    }
  }  // the tail is inserted when the insert goes out of scope
  EXPECT_EQ(rows_of(db), expected);
}

TEST(BatchedInsert, UnsignedAboveInt64IsStoredAsRealAndFlushInsertsThePartialStep) {
  const Connection db(":memory:", kFlags);
  create_table(db);
  BatchedInsert insert(db, "t", 4, std::nullopt);
  const std::uint64_t huge = std::numeric_limits<std::uint64_t>::max();
  insert.i64(1).text(std::string_view("a")).u64(huge).null().done();
  insert.flush();
  const std::vector<std::string> rows = rows_of(db);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].substr(0, 11), "1|1|a|real:") << rows[0];
}

TEST(BatchedInsert, ARowWithTheWrongColumnCountIsAnError) {
  const Connection db(":memory:", kFlags);
  create_table(db);
  bool thrown = false;
  try {
    BatchedInsert insert(db, "t", 4, std::nullopt);
    insert.i64(1).done();
  } catch (const candle_graph::Error&) {
    thrown = true;
  }
  EXPECT_TRUE(thrown);
  EXPECT_TRUE(rows_of(db).empty());  // nothing inserted on the way out
}

TEST(BatchedInsert, NothingIsInsertedWhileAnExceptionLeavesTheScope) {
  const Connection db(":memory:", kFlags);
  create_table(db);
  try {
    BatchedInsert insert(db, "t", 4, std::nullopt);
    insert.i64(1).text(std::string_view("a")).i64(2).null().done();
    throw std::runtime_error("the load failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_TRUE(rows_of(db).empty());
}

}  // namespace
