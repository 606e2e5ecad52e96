// sqlite::DatabaseFile, the one file output that SQLite writes itself: its temporary sibling is
// the hidden `.NAME.tmp-PID-N` every output uses, and a destination directory removed before
// the rename is an error naming the target, with nothing left behind.
#include <gmock/gmock.h>
#include <unistd.h>

#include "candle_graph/error.hpp"
#include "sqlite/sqlite_export.hpp"
#include "support/temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using candle_graph::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(DatabaseFileFaults, TemporaryFileIsHiddenAndNamesTheProcess) {
  TempDir dir;
  candle_graph::sqlite::DatabaseFile db(dir / "runs.db", false);
  const auto names = dir.entries();
  ASSERT_EQ(names.size(), 1u);
  EXPECT_THAT(names[0], StartsWith(".runs.db.tmp-" + std::to_string(::getpid()) + "-"));
  db.commit();
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"runs.db"});
}

TEST(DatabaseFileFaults, DestinationDirectoryRemovedBeforeCommit) {
  TempDir dir;
  const fs::path target = dir / "sub" / "runs.db";
  candle_graph::sqlite::DatabaseFile db(target, false);
  fs::remove_all(dir / "sub");
  try {
    db.commit();
    ADD_FAILURE() << "committed into a removed directory";
  } catch (const candle_graph::Error& e) {
    EXPECT_EQ(e.path(), target.string());
    EXPECT_THAT(e.what(), HasSubstr("cannot rename the finished database"));
  }
  EXPECT_TRUE(dir.entries().empty());
}

}  // namespace
