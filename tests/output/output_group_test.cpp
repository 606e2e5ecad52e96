// output::OutputGroup: the outputs of one command land together at commit, or not at all; the
// files are checked on disk (read back with std::ifstream), not through the group.
#include <gmock/gmock.h>

#include <cstdlib>

#include "candle_graph/error.hpp"
#include "output/output_group.hpp"
#include "support/files.hpp"
#include "support/temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using candle_graph::output::AtomicFile;
using candle_graph::output::OutputGroup;
using candle_graph::testing::read_file;
using candle_graph::testing::TempDir;
using candle_graph::testing::write_file;
using ::testing::UnorderedElementsAre;

TEST(OutputGroup, NothingLandsBeforeCommitAndEverythingAfter) {
  TempDir dir("cg-group");
  ASSERT_TRUE(write_file(dir / "a", "old a"));
  {
    OutputGroup group;
    AtomicFile& a = group.open(dir / "a");
    a.write("new a");
    AtomicFile& b = group.open(dir / "b");
    EXPECT_FALSE(a.is_open()) << "the first file stays open beside the second";
    b.write("new b");
    EXPECT_EQ(read_file(dir / "a"), "old a");
    EXPECT_FALSE(fs::exists(dir / "b"));
    group.commit();
  }
  EXPECT_EQ(read_file(dir / "a"), "new a");
  EXPECT_EQ(read_file(dir / "b"), "new b");
  EXPECT_THAT(dir.entries(), UnorderedElementsAre("a", "b"));
}

// Both outputs in a directory the first one created: when the second fails, the directory goes
// too (it is only empty once the second's temporary file is gone as well).
TEST(OutputGroup, AFailedGroupLeavesNoDirectoryItCreated) {
  TempDir dir("cg-group");
  ::setenv(candle_graph::output::kTestWriteLimitVariable, "8", 1);
  try {
    OutputGroup group;
    group.open(dir / "new" / "a").write("new a");
    group.open(dir / "new" / "b").write("new b, too long");
    ADD_FAILURE() << "the write over the limit was accepted";
  } catch (const candle_graph::Error&) {
  }
  ::unsetenv(candle_graph::output::kTestWriteLimitVariable);
  EXPECT_TRUE(dir.entries().empty()) << ::testing::PrintToString(dir.entries());
}

TEST(OutputGroup, AFailedOutputLeavesEveryOtherAsItWas) {
  TempDir dir("cg-group");
  ASSERT_TRUE(write_file(dir / "a", "old a"));
  ASSERT_TRUE(write_file(dir / "b", "old b"));
  // Every file takes at most 8 bytes: the second output's write fails.
  ::setenv(candle_graph::output::kTestWriteLimitVariable, "8", 1);
  try {
    OutputGroup group;
    group.open(dir / "a").write("new a");
    group.open(dir / "b").write("new b, too long");
    ADD_FAILURE() << "the write over the limit was accepted";
  } catch (const candle_graph::Error&) {
  }
  ::unsetenv(candle_graph::output::kTestWriteLimitVariable);
  EXPECT_EQ(read_file(dir / "a"), "old a");
  EXPECT_EQ(read_file(dir / "b"), "old b");
  EXPECT_THAT(dir.entries(), UnorderedElementsAre("a", "b")) << "a temporary file was left";
}

}  // namespace
