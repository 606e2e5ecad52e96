// The write-behind VFS (sqlite/write_behind_vfs.hpp): a database written through it holds what
// the same statements write through the platform's VFS, also when SQLite reads pages back while
// others are still queued (a page cache of a few pages, an index built in the same transaction,
// with a mapping allowed and without), and a full disk fails the statement that writes after the
// failed write, or the COMMIT when the last pages fail. Expected rows are computed in the test
// and read back with plain SELECTs; the reference database is written by the same statements
// without the VFS.
#include <gmock/gmock.h>

#include <cstdint>
#include <string>
#include <vector>

#include "candle_graph/error.hpp"
#include "sqlite/sqlite_handle.hpp"
#include "sqlite/write_behind_vfs.hpp"
#include "support/full_disk.hpp"
#include "support/temp_dir.hpp"

namespace {

using candle_graph::sqlite::Connection;
using candle_graph::sqlite::PageWrites;
using candle_graph::sqlite::Statement;
using candle_graph::sqlite::write_behind_counts;
using candle_graph::testing::FullDisk;
using candle_graph::testing::TempDir;
using ::testing::HasSubstr;

constexpr int kCreate = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
constexpr std::int64_t kRows = 6000;

// Row k's text: long enough that a 4 KiB page holds a few dozen rows.
std::string value_of(std::int64_t k) {
  return "row " + std::to_string(k) + " " + std::string(static_cast<std::size_t>(40 + k % 50), 'x');
}

// The keys in a scattered order (a permutation: 7919 and kRows share no factor), so inserts land
// all over both b-trees and evict pages that later lookups read back.
std::int64_t key_at(std::int64_t i) {
  return (i * 7919) % kRows;
}

std::string text_at(const Statement& q, int column) {
  return reinterpret_cast<const char*>(sqlite3_column_text(q.get(), column));
}

// Inserts every row with a page cache of 8 pages, and every 50 rows looks up a row inserted
// earlier by its text (through the index); returns the lookups that did not find their row.
int write_rows(const Connection& db, std::int64_t mmap_bytes) {
  db.exec("PRAGMA page_size = 4096; PRAGMA cache_size = 8; PRAGMA mmap_size = " +
          std::to_string(mmap_bytes) +
          "; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; "
          "PRAGMA locking_mode = EXCLUSIVE; BEGIN;"
          "CREATE TABLE t (k INTEGER NOT NULL, v TEXT NOT NULL); CREATE INDEX t_by_v ON t (v);");
  Statement insert(db, "INSERT INTO t VALUES (?1, ?2)");
  Statement lookup(db, "SELECT k FROM t WHERE v = ?1");
  int missed = 0;
  for (std::int64_t i = 0; i < kRows; ++i) {
    insert.bind_i64(1, key_at(i));
    insert.bind_text(2, value_of(key_at(i)), /*stable=*/false);
    insert.run();
    if (i % 50 == 49) {
      lookup.bind_text(1, value_of(key_at(i / 2)), /*stable=*/false);
      if (!lookup.step() || sqlite3_column_int64(lookup.get(), 0) != key_at(i / 2)) ++missed;
      lookup.reset();
    }
  }
  // An index built in the same transaction reads the table back (through the mapping, if any).
  db.exec("CREATE INDEX t_by_k ON t (k); COMMIT");
  return missed;
}

std::vector<std::string> rows_of(const std::string& path) {
  const Connection db(path, SQLITE_OPEN_READONLY);
  Statement q(db, "SELECT k, v FROM t ORDER BY k");
  std::vector<std::string> rows;
  while (q.step())
    rows.push_back(std::to_string(sqlite3_column_int64(q.get(), 0)) + "|" + text_at(q, 1));
  return rows;
}

class WriteBehindVfs : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(WriteBehindVfs, ReadsBackWhatItWroteAndWritesWhatSqliteWrites) {
  ASSERT_NE(candle_graph::sqlite::write_behind_vfs(), nullptr);
  TempDir dir;
  const std::string behind = (dir / "behind.db").string(), direct = (dir / "direct.db").string();
  const auto before = write_behind_counts();
  {
    Connection db(behind, kCreate, PageWrites::behind);
    EXPECT_EQ(write_rows(db, GetParam()), 0);
  }
  const auto after = write_behind_counts();
  {
    Connection db(direct, kCreate, PageWrites::direct);
    EXPECT_EQ(write_rows(db, GetParam()), 0);
  }
  // Pages went behind, and the lookups of evicted pages waited for them.
  EXPECT_GT(after.pages_queued, before.pages_queued);
  EXPECT_GT(after.waits, before.waits);
  EXPECT_GT(after.writes, before.writes);

  std::vector<std::string> expected;
  for (std::int64_t k = 0; k < kRows; ++k)
    expected.push_back(std::to_string(k) + "|" + value_of(k));
  EXPECT_EQ(rows_of(behind), expected);
  EXPECT_EQ(rows_of(direct), expected);
  const Connection check(behind, SQLITE_OPEN_READONLY);
  Statement integrity(check, "PRAGMA integrity_check");
  ASSERT_TRUE(integrity.step());
  EXPECT_EQ(text_at(integrity, 0), "ok");
}

INSTANTIATE_TEST_SUITE_P(MappedOrRead, WriteBehindVfs, ::testing::Values(0, 64 << 20),
                         [](const auto& info) { return info.param ? "mapped" : "read"; });

// `kib` KiB of rows, in one transaction; SQLite's error, or empty.
std::string write_kib(const Connection& db, int kib, const std::string& cache_pages) {
  try {
    db.exec("PRAGMA page_size = 4096; PRAGMA cache_size = " + cache_pages +
            "; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; "
            "PRAGMA locking_mode = EXCLUSIVE; BEGIN; CREATE TABLE t (v TEXT NOT NULL);");
    Statement insert(db, "INSERT INTO t VALUES (?1)");
    for (int i = 0; i < kib; ++i) {
      insert.bind_text(1, std::string(1024, static_cast<char>('a' + i % 26)), false);
      insert.run();
    }
    db.exec("COMMIT");
  } catch (const candle_graph::Error& e) {
    return e.what();
  }
  return {};
}

TEST(WriteBehindVfsFaults, AFullDiskFailsTheStatementThatWritesAfterIt) {
  FullDisk disk(FullDisk::Kind::empty, "256k");
  if (!disk.mounted()) GTEST_SKIP() << "mounting a tmpfs is not permitted here: " << disk.refused();
  Connection db((disk.path() / "t.db").string(), kCreate, PageWrites::behind);
  // 8 pages of cache: pages are written (queued) all along, so the failed write is returned by
  // a later write, and the statement fails with the platform VFS's own error.
  EXPECT_THAT(write_kib(db, 2048, "8"), HasSubstr("database or disk is full"));
}

TEST(WriteBehindVfsFaults, AFullDiskFailsTheCommitWhenTheLastPagesFail) {
  FullDisk disk(FullDisk::Kind::empty, "64k");
  if (!disk.mounted()) GTEST_SKIP() << "mounting a tmpfs is not permitted here: " << disk.refused();
  Connection db((disk.path() / "t.db").string(), kCreate, PageWrites::behind);
  // 512 KiB in a cache that holds all of it: every page is written at COMMIT, fewer than wake
  // the writer, and no later write is refused. SQLite ignores an error from closing a file;
  // COMMIT waits for the pages (the sync it asks for in place of an fsync) and fails.
  EXPECT_THAT(write_kib(db, 512, "-16384"), HasSubstr("database or disk is full"));
}

}  // namespace
