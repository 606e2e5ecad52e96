// output::CreatedParents: the directories an output creates above itself are removed again,
// innermost first and only while empty, unless the output was put in place. Checked by looking
// at the file system (std::filesystem), not at the class's own bookkeeping.
#include <gmock/gmock.h>

#include <cerrno>
#include <cstring>

#include "candle_graph/error.hpp"
#include "output/created_parents.hpp"
#include "support/files.hpp"
#include "support/temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using candle_graph::output::CreatedParents;
using candle_graph::testing::TempDir;
using candle_graph::testing::write_file;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(CreatedParents, DirectoriesNotKeptAreRemoved) {
  TempDir dir("cg-parents");
  {
    CreatedParents parents;
    parents.create(dir / "a" / "b" / "c", "out");
    EXPECT_TRUE(fs::is_directory(dir / "a" / "b" / "c"));
  }
  EXPECT_TRUE(dir.entries().empty());
}

TEST(CreatedParents, KeptDirectoriesStay) {
  TempDir dir("cg-parents");
  {
    CreatedParents parents;
    parents.create(dir / "a" / "b", "out");
    parents.keep();
  }
  EXPECT_TRUE(fs::is_directory(dir / "a" / "b"));
}

TEST(CreatedParents, OnlyTheDirectoriesItCreatedAndOnlyWhileEmpty) {
  TempDir dir("cg-parents");
  fs::create_directory(dir / "old");
  {
    CreatedParents parents;
    parents.create(dir / "old" / "new" / "full" / "empty", "out");
    // Another program puts a file into one of them meanwhile.
    ASSERT_TRUE(write_file(dir / "old" / "new" / "full" / "theirs", "x"));
  }
  // "empty" went; "full" holds a file, so it and everything above it stay.
  EXPECT_FALSE(fs::exists(dir / "old" / "new" / "full" / "empty"));
  EXPECT_TRUE(fs::exists(dir / "old" / "new" / "full" / "theirs"));
  EXPECT_THAT(dir.entries(), ElementsAre("old"));
}

TEST(CreatedParents, ExistingDirectoriesAreLeftAlone) {
  TempDir dir("cg-parents");
  fs::create_directories(dir / "x" / "y");
  {
    CreatedParents parents;
    parents.create(dir / "x" / "y", "out");
    parents.create(fs::path(), "out");  // a file in the working directory: nothing to create
  }
  EXPECT_TRUE(fs::is_directory(dir / "x" / "y"));
}

TEST(CreatedParents, AFileInThePathIsAnErrorNamingTheOutputAndTheDirectory) {
  TempDir dir("cg-parents");
  ASSERT_TRUE(write_file(dir / "file", "x"));
  CreatedParents parents;
  try {
    parents.create(dir / "file" / "sub" / "deeper", "the-output.json");
    FAIL() << "no error";
  } catch (const candle_graph::Error& e) {
    EXPECT_EQ(e.path(), "the-output.json");
    EXPECT_THAT(e.message(),
                HasSubstr("cannot create directory " + (dir / "file" / "sub").string() + ": " +
                          std::strerror(ENOTDIR)));
  }
  EXPECT_THAT(dir.entries(), ElementsAre("file"));
}

}  // namespace
