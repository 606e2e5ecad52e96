// output::AtomicFile, the writer every file output goes through: nothing at the destination
// until commit, a destination directory that vanishes mid-write is an error naming the path,
// and the temporary files of killed processes are recognisable and removed by the next write.
#include <gmock/gmock.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "candle_graph/error.hpp"
#include "output/atomic_file.hpp"
#include "support/files.hpp"
#include "support/temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using candle_graph::output::AtomicFile;
using candle_graph::testing::read_file;
using candle_graph::testing::TempDir;
using candle_graph::testing::write_file;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// The PID of a child that has exited and been reaped: a process that no longer runs.
pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

TEST(AtomicFile, NothingAtTheDestinationUntilCommit) {
  TempDir dir;
  const fs::path target = dir / "out.json";
  AtomicFile f(target);
  f.write("partial");
  EXPECT_FALSE(fs::exists(target));
  // The temporary sibling is hidden and names the target and this process.
  const auto names = dir.entries();
  ASSERT_EQ(names.size(), 1u);
  EXPECT_THAT(names[0], StartsWith(".out.json.tmp-" + std::to_string(::getpid()) + "-"));
  f.commit();
  EXPECT_EQ(read_file(target), "partial");
  EXPECT_THAT(dir.entries(), ElementsAre("out.json"));
}

// Writes pieces of `piece_size(i)` bytes of 'a' + i % 26, each ending in a newline, until at least
// `total` bytes; returns what was written, kept here to compare with the file.
template <typename PieceSize>
std::string write_pieces(AtomicFile& f, std::size_t total, PieceSize piece_size) {
  std::string written;
  for (std::size_t i = 0; written.size() < total; ++i) {
    std::string piece(piece_size(i), static_cast<char>('a' + i % 26));
    piece.back() = '\n';
    f.write(piece);
    written += piece;
  }
  return written;
}

// A large file replacing an existing one: the old file until commit, and the new one after it
// exactly what was written, whether through the page cache or around it. The expected text is
// built here, piece by piece, not read back through AtomicFile.
TEST(AtomicFile, ReplacingALargeFileKeepsTheOldOneUntilCommitAndWritesEveryByte) {
  TempDir dir;
  const fs::path target = dir / "out.json";
  write_file(target, "the old file");
  AtomicFile f(target);
  // 40 MiB in pieces of odd sizes: a writeback of the first 16 MiB, then direct writes
  // (output/direct_writes.hpp) whose switch, stages and tail fall inside pieces.
  const std::string expected =
      write_pieces(f, std::size_t{40} << 20, [](std::size_t i) { return 999'983 + i * 4'099; });
  EXPECT_EQ(read_file(target), "the old file");
  f.commit();
  EXPECT_EQ(read_file(target), expected);
  EXPECT_THAT(dir.entries(), ElementsAre("out.json"));
}

// A full disk in the part written around the page cache is reported as before, with the path,
// and leaves no file behind.
TEST(AtomicFile, AFullDiskPastTheFirst16MiBNamesThePathAndLeavesNothing) {
  TempDir dir;
  const fs::path target = dir / "big.json";
  ::setenv(candle_graph::output::kTestWriteLimitVariable, std::to_string(20 << 20).c_str(), 1);
  try {
    AtomicFile f(target);
    const std::string piece(std::size_t{3} << 20, 'x');
    for (int i = 0; i < 10; ++i) f.write(piece);
    ADD_FAILURE() << "30 MiB written under a 20 MiB limit";
  } catch (const candle_graph::Error& e) {
    EXPECT_EQ(e.path(), target.string());
    EXPECT_THAT(e.what(), HasSubstr("cannot write output file"));
  }
  ::unsetenv(candle_graph::output::kTestWriteLimitVariable);
  EXPECT_TRUE(dir.entries().empty());
}

TEST(AtomicFile, DestinationDirectoryRemovedMidWrite) {
  TempDir dir;
  const fs::path sub = dir / "sub";
  const fs::path target = sub / "out.json";
  AtomicFile f(target);
  f.write("some bytes");
  fs::remove_all(sub);
  try {
    f.commit();
    ADD_FAILURE() << "commit succeeded into a removed directory";
  } catch (const candle_graph::Error& e) {
    EXPECT_EQ(e.path(), target.string());
    EXPECT_THAT(e.what(), HasSubstr("cannot replace output file"));
  }
  EXPECT_FALSE(fs::exists(target));
}

TEST(AtomicFile, InjectedWriteFailureNamesThePathAndLeavesNothing) {
  TempDir dir;
  const fs::path target = dir / "out.json";
  ::setenv(candle_graph::output::kTestWriteLimitVariable, "4", 1);
  try {
    AtomicFile f(target);
    f.write("1234");  // exactly the limit: accepted
    EXPECT_THROW(f.write("5"), candle_graph::Error);
  } catch (...) {
    ADD_FAILURE() << "the file could not be opened";
  }
  ::unsetenv(candle_graph::output::kTestWriteLimitVariable);
  EXPECT_TRUE(dir.entries().empty());
}

TEST(AtomicFile, NextWriteRemovesTheTemporaryFilesOfDeadProcesses) {
  TempDir dir;
  const fs::path target = dir / "out.json";
  const std::string dead = ".out.json.tmp-" + std::to_string(dead_pid()) + "-123";
  const std::string alive = ".out.json.tmp-" + std::to_string(::getpid()) + "-456";
  const std::string other_target = ".other.json.tmp-" + std::to_string(dead_pid()) + "-7";
  const std::string not_ours = ".out.json.tmp-notapid";
  for (const auto& name : {dead, alive, other_target, not_ours}) write_file(dir / name, "x");
  candle_graph::output::write_file_atomic(target, "new");
  // Only the dead process's file of this target goes; a live process may still rename its own.
  std::vector<std::string> expected = {alive, other_target, not_ours, "out.json"};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(dir.entries(), expected);
}

}  // namespace
