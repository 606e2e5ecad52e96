// SQLite's large freed blocks kept for the next large request (sqlite/sorter_memory.hpp): a block
// freed is handed out again instead of a fresh one, grows in place when it is already large
// enough, carries the bytes of a smaller buffer it replaces, and is released on request. The
// expectations follow from the allocator's contract, not from its code: pointers and bytes are
// compared through SQLite's own sqlite3_malloc / sqlite3_realloc / sqlite3_msize.
#include <gtest/gtest.h>

#include <sqlite3.h>

#include <cstring>

#include "sqlite/sorter_memory.hpp"
#include "sqlite/sqlite_handle.hpp"

namespace {

using candle_graph::sqlite::Connection;
using candle_graph::sqlite::kKeptFrom;
using candle_graph::sqlite::release_sorter_memory;
using candle_graph::sqlite::sorter_memory_kept;

// A connection installs the allocator before SQLite's first use (every use goes through one).
void open_once() {
  static const Connection db(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  ASSERT_TRUE(candle_graph::sqlite::install_sorter_memory());
}

TEST(SorterMemory, AFreedLargeBlockIsTheNextLargeOne) {
  open_once();
  release_sorter_memory();
  void* big = sqlite3_malloc(2 * kKeptFrom);
  ASSERT_NE(big, nullptr);
  sqlite3_free(big);
  EXPECT_GE(sorter_memory_kept(), static_cast<std::size_t>(2 * kKeptFrom));
  void* again = sqlite3_malloc(kKeptFrom + 1);
  EXPECT_EQ(again, big);  // the kept block, not a fresh one
  EXPECT_EQ(sorter_memory_kept(), 0u);
  sqlite3_free(again);
  release_sorter_memory();
  EXPECT_EQ(sorter_memory_kept(), 0u);
}

TEST(SorterMemory, SmallBlocksAreNotKept) {
  open_once();
  release_sorter_memory();
  void* small = sqlite3_malloc(kKeptFrom / 4);
  ASSERT_NE(small, nullptr);
  sqlite3_free(small);
  EXPECT_EQ(sorter_memory_kept(), 0u);
}

TEST(SorterMemory, AGrowingBufferMovesIntoTheKeptBlockWithItsBytes) {
  open_once();
  release_sorter_memory();
  void* big = sqlite3_malloc(4 * kKeptFrom);
  ASSERT_NE(big, nullptr);
  sqlite3_free(big);
  // A sort buffer that starts small and doubles, as SQLite's sorter does.
  auto* buffer = static_cast<unsigned char*>(sqlite3_malloc(kKeptFrom / 2));
  ASSERT_NE(buffer, nullptr);
  for (int i = 0; i < kKeptFrom / 2; ++i) buffer[i] = static_cast<unsigned char>(i * 7);
  auto* grown = static_cast<unsigned char*>(sqlite3_realloc(buffer, kKeptFrom));
  ASSERT_EQ(static_cast<void*>(grown), big);
  for (int i = 0; i < kKeptFrom / 2; ++i)
    ASSERT_EQ(grown[i], static_cast<unsigned char>(i * 7)) << i;
  // Already large enough: the same block.
  EXPECT_EQ(sqlite3_realloc(grown, 2 * kKeptFrom), static_cast<void*>(grown));
  EXPECT_GE(sqlite3_msize(grown), static_cast<sqlite3_uint64>(2 * kKeptFrom));
  sqlite3_free(grown);
  EXPECT_GE(sorter_memory_kept(), static_cast<std::size_t>(4 * kKeptFrom));
  release_sorter_memory();
}

// Through SQL: an index over enough rows that its sort buffer passes the kept size leaves a
// block kept, which the next index build takes; the index itself is as SQLite builds it.
TEST(SorterMemory, IndexBuildsShareTheirSortBuffer) {
  open_once();
  release_sorter_memory();
  Connection db(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  db.exec("PRAGMA cache_size = -24576");
  db.exec("CREATE TABLE t (a TEXT, b INTEGER)");
  db.exec(
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000) "
      "INSERT INTO t SELECT printf('row-%08d', (i * 7919) % 200000), i FROM n");
  db.exec("CREATE INDEX t_a ON t (a)");
  EXPECT_GE(sorter_memory_kept(), static_cast<std::size_t>(kKeptFrom));
  db.exec("CREATE INDEX t_b ON t (b, a)");
  db.exec("PRAGMA integrity_check");
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db.get(), "SELECT count(*) FROM t INDEXED BY t_a WHERE a >= 'row-'",
                               -1, &st, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), 200000);
  sqlite3_finalize(st);
  release_sorter_memory();
  EXPECT_EQ(sorter_memory_kept(), 0u);
}

}  // namespace
