// output::AtomicFile, the writer every file output goes through: nothing at the destination
// until commit, a destination directory that vanishes mid-write is an error naming the path,
// and the temporary files of killed processes are recognisable and removed by the next write.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>
#include <vector>

#include "candle_graph/error.hpp"
#include "output/atomic_file.hpp"
#include "support/files.hpp"
#include "support/temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using candle_graph::output::AtomicFile;
using candle_graph::output::write_file_atomic;
using candle_graph::testing::read_file;
using candle_graph::testing::takes_direct_writes;
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

// The permission bits of a path as the kernel reports them (stat), set-ID and sticky bits included.
mode_t mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

// The one temporary sibling of `target` in its directory, while it is being written.
fs::path temp_file_of(const fs::path& target) {
  for (const auto& e : fs::directory_iterator(target.parent_path()))
    if (e.path().filename().string().starts_with("." + target.filename().string() + ".tmp-"))
      return e.path();
  ADD_FAILURE() << "no temporary file for " << target;
  return {};
}

// Restores the process's umask when a test that sets its own ends.
class UmaskScope {
 public:
  explicit UmaskScope(mode_t mask) : saved_(::umask(mask)) {}
  ~UmaskScope() { ::umask(saved_); }
  UmaskScope(const UmaskScope&) = delete;
  UmaskScope& operator=(const UmaskScope&) = delete;

 private:
  mode_t saved_;
};

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

// Commits `f`; its target then holds `expected` and is the only entry of `dir`.
void commit_and_expect(AtomicFile& f, const TempDir& dir, const fs::path& target,
                       const std::string& expected) {
  f.commit();
  EXPECT_EQ(read_file(target), expected);
  EXPECT_THAT(dir.entries(), ElementsAre(target.filename().string()));
}

// Whether this process holds the temporary sibling of `target` open with O_DIRECT, as the
// kernel reports its flags (/proc/self/fdinfo), not as AtomicFile says.
bool temp_file_is_direct(const fs::path& target) {
  const std::string prefix = "." + target.filename().string() + ".tmp-";
  for (const auto& e : fs::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const fs::path to = fs::read_symlink(e.path(), ec);
    if (ec || !to.filename().string().starts_with(prefix)) continue;
    std::istringstream info(read_file(fs::path("/proc/self/fdinfo") / e.path().filename()));
    for (std::string key, value; info >> key >> value;)
      if (key == "flags:") return (std::stoul(value, nullptr, 8) & O_DIRECT) != 0;
  }
  ADD_FAILURE() << "no open temporary file for " << target;
  return false;
}

// A large file replacing an existing one: the old file until commit, and the new one after it
// exactly what was written, whether through the page cache or around it. The expected text is
// built here, piece by piece, not read back through AtomicFile.
TEST(AtomicFile, ReplacingALargeFileKeepsTheOldOneUntilCommitAndWritesEveryByte) {
  TempDir dir;
  const fs::path target = dir / "out.json";
  write_file(target, "the old file");
  // No stage counts as slow, however busy the machine: the direct writes last to the end.
  ::setenv(candle_graph::output::kTestDirectStageVariable, "10000000000", 1);
  AtomicFile f(target);
  // 40 MiB in pieces of odd sizes: direct writes (output/direct_writes.hpp) whose stages and
  // tail fall inside pieces.
  const std::string expected =
      write_pieces(f, std::size_t{40} << 20, [](std::size_t i) { return 999'983 + i * 4'099; });
  ::unsetenv(candle_graph::output::kTestDirectStageVariable);
  EXPECT_EQ(read_file(target), "the old file");
  EXPECT_EQ(temp_file_is_direct(target), takes_direct_writes(dir.path()));
  commit_and_expect(f, dir, target, expected);
}

// A disk slower than the page cache (made so by the test hook: every stage is slow) gets
// the rest of the file through the page cache after six direct stages (two of warm-up, four
// judged), and the file is still exactly what was written.
TEST(AtomicFile, ASlowDiskGetsTheRestThroughThePageCacheAndNothingIsLost) {
  TempDir dir;
  const fs::path target = dir / "big.json";
  ::setenv(candle_graph::output::kTestDirectStageVariable, "1", 1);
  AtomicFile f(target);
  const auto odd_sizes = [](std::size_t i) { return 999'983 + i * 4'099; };
  // 20 MiB: direct from the first byte, four stages written (two of warm-up, two judged), too
  // few to judge the pace.
  std::string expected = write_pieces(f, std::size_t{20} << 20, odd_sizes);
  EXPECT_EQ(temp_file_is_direct(target), takes_direct_writes(dir.path()));
  // 44 MiB: judged slow at the sixth stage (at 24 MiB), the rest went through the page cache.
  expected += write_pieces(f, std::size_t{24} << 20, odd_sizes);
  ::unsetenv(candle_graph::output::kTestDirectStageVariable);
  EXPECT_FALSE(temp_file_is_direct(target));
  commit_and_expect(f, dir, target, expected);
}

// A full disk while the file is written around the page cache is reported with the path, and
// leaves no file behind.
TEST(AtomicFile, AFullDiskInTheDirectWritesNamesThePathAndLeavesNothing) {
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

std::size_t pages_of(std::size_t bytes) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page;
}

// How many pages of the first `bytes` of `path` are in the page cache, as the kernel reports it
// (mincore over a mapping of the file), not as AtomicFile says.
std::size_t cached_pages(const fs::path& path, std::size_t bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return ADD_FAILURE() << "cannot open " << path, 0;
  void* map = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return ADD_FAILURE() << "cannot map " << path, 0;
  std::vector<unsigned char> resident(pages_of(bytes));
  EXPECT_EQ(::mincore(map, bytes, resident.data()), 0) << std::strerror(errno);
  ::munmap(map, bytes);
  std::size_t cached = 0;
  for (unsigned char r : resident) cached += r & 1;
  return cached;
}

// A large output goes around the page cache from its first stage on, so that the page cache's
// fresh pages (and, when it replaces a file, their writeback) are not paid for the bytes a
// stage holds; an output smaller than a stage is written through the page cache at commit.
TEST(AtomicFile, StagesGoAroundThePageCacheFromTheFirstByteAndASmallFileThroughIt) {
  TempDir dir;
  if (!takes_direct_writes(dir.path())) GTEST_SKIP() << dir.path() << " takes no direct writes";
  using candle_graph::output::DirectWrites;
  const auto odd_sizes = [](std::size_t i) { return 99'991 + i * 4'099; };
  ::setenv(candle_graph::output::kTestDirectStageVariable, "10000000000", 1);  // never slow
  const fs::path large = dir / "large.json";
  AtomicFile big(large);
  const std::string expected = write_pieces(big, 2 * DirectWrites::kStage + 12'345, odd_sizes);
  big.commit();
  const fs::path small = dir / "small.json";
  AtomicFile little(small);
  const std::string expected_small = write_pieces(little, DirectWrites::kStage / 4, odd_sizes);
  little.commit();
  ::unsetenv(candle_graph::output::kTestDirectStageVariable);
  // The two whole stages, checked before anything reads the file back into the cache.
  EXPECT_EQ(cached_pages(large, 2 * DirectWrites::kStage), 0u);
  EXPECT_EQ(cached_pages(small, expected_small.size()), pages_of(expected_small.size()));
  EXPECT_EQ(read_file(large), expected);
  EXPECT_EQ(read_file(small), expected_small);
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
    try {
      f.write("5");
      ADD_FAILURE() << "a write over the limit was accepted";
    } catch (const candle_graph::Error& e) {
      // The file system refused, not the input: callers that tell the two apart (a rank page
      // that cannot be written ends `ranks`, a rank that cannot be read does not) rely on it.
      EXPECT_EQ(e.kind(), candle_graph::ErrorKind::io);
      EXPECT_EQ(e.path(), target.string());
    }
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

// An output name of 250 bytes (valid: Linux's limit is 255) is written, though `.NAME.tmp-PID-N`
// would be longer than that: the temporary name cuts NAME short (at a character boundary, here
// inside two-byte 'é's), and the stale file of a dead process with that cut name is removed.
TEST(AtomicFile, AnOutputNameNearTheFileSystemsLimitIsWritten) {
  TempDir dir;
  for (const std::string& name :
       {std::string(245, 'n') + ".json", std::string(200, 'n') + std::string(25, '\0') + ".json"}) {
    std::string utf8 = name;
    // The second name: 25 two-byte characters (50 bytes) where the zero bytes stand.
    if (const auto z = utf8.find('\0'); z != std::string::npos) {
      std::string e;
      for (int i = 0; i < 25; ++i) e += "\xC3\xA9";
      utf8 = utf8.substr(0, z) + e + ".json";
    }
    SCOPED_TRACE(utf8.size());
    ASSERT_LE(utf8.size(), 255u);
    const fs::path target = dir / utf8;
    // A stale temporary file as a killed process would have left it: the same cut name.
    const std::string cut = candle_graph::output::sibling_name(target, 1 + 5 + 21);
    ASSERT_LT(cut.size(), utf8.size());
    ASSERT_TRUE(utf8.starts_with(cut));
    // Whole characters only: as many lead bytes (0xC3) as continuation bytes (0xA9).
    EXPECT_EQ(std::count(cut.begin(), cut.end(), '\xC3'),
              std::count(cut.begin(), cut.end(), '\xA9'));
    const fs::path stale = dir / ("." + cut + ".tmp-" + std::to_string(dead_pid()) + "-1");
    ASSERT_LE(stale.filename().string().size(), 255u);
    ASSERT_TRUE(write_file(stale, "x"));
    write_file_atomic(target, "new");
    EXPECT_EQ(read_file(target), "new");
    EXPECT_FALSE(fs::exists(stale));
    EXPECT_THAT(dir.entries(), ElementsAre(utf8));
    fs::remove(target);
  }
}

// A pipe named by a link is written where it is: the reader gets every byte, and the pipe and
// the link are still there afterwards, with no temporary file beside them. (A temporary file
// renamed over the link would leave the reader waiting for a writer forever: a second name of
// the pipe lets the test wake it, so a failure fails instead of hanging.)
TEST(AtomicFile, APipeIsWrittenWhereItIsAndStaysAPipe) {
  TempDir dir;
  const fs::path fifo = dir / "pipe", spare = dir / "pipe-again", link = dir / "out.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  ASSERT_EQ(::link(fifo.c_str(), spare.c_str()), 0) << std::strerror(errno);
  fs::create_symlink(fifo, link);
  std::string received;
  std::thread reader([&] {
    const int fd = ::open(fifo.c_str(), O_RDONLY);  // waits for a writer
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) received.append(buf, n);
    ::close(fd);
  });
  const std::string text(100'000, 'p');
  candle_graph::output::write_file_atomic(link, text);
  const int wake = ::open(spare.c_str(), O_WRONLY | O_NONBLOCK);  // ENXIO once the reader left
  if (wake >= 0) ::close(wake);
  reader.join();
  EXPECT_EQ(received.size(), text.size());
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_TRUE(fs::is_fifo(fs::status(link)));
  EXPECT_THAT(dir.entries(), ElementsAre("out.json", "pipe", "pipe-again"));
}

// A link to an open descriptor, as /dev/stdout is to /proc/self/fd/1, is written through: the
// descriptor's file (here a regular one, as after `> out.txt`) gets the bytes and the link stays.
// Renamed over, the link would become the output and the descriptor's file stay empty.
TEST(AtomicFile, ALinkToAnOpenDescriptorIsWrittenThrough) {
  TempDir dir;
  const fs::path sink = dir / "shell-output.txt", link = dir / "stdout";
  const int fd = ::open(sink.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  fs::create_symlink("/proc/self/fd/" + std::to_string(fd), link);
  candle_graph::output::write_file_atomic(link, "through the descriptor\n");
  ::close(fd);
  EXPECT_EQ(read_file(sink), "through the descriptor\n");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_THAT(dir.entries(), ElementsAre("shell-output.txt", "stdout"));
}

// A link (here a chain of two, the first relative and into another directory) to a regular file
// is written through: the file it names gets the new bytes, atomically and with no temporary
// file left in either directory, and the links stay links. Renamed over, the first link would
// become a regular file holding the output, and the file it named would keep its old contents.
TEST(AtomicFile, ALinkToARegularFileReplacesTheFileItNamesAndStaysALink) {
  TempDir dir;
  fs::create_directories(dir / "runs");
  fs::create_directories(dir / "latest");
  const fs::path real = dir / "runs" / "out.json", middle = dir / "runs" / "current.json",
                 link = dir / "latest" / "out.json";
  write_file(real, "old contents\n");
  ASSERT_EQ(::chmod(real.c_str(), 0640), 0);
  fs::create_symlink("out.json", middle);
  fs::create_symlink("../runs/current.json", link);
  AtomicFile f(link);
  f.write("new contents\n");
  EXPECT_EQ(read_file(real), "old contents\n");  // nothing replaced before the commit
  f.commit();
  EXPECT_EQ(read_file(real), "new contents\n");
  EXPECT_EQ(mode_of(real), 0640u);  // the file's own mode, not the links' 0777
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(middle)));
  EXPECT_EQ(fs::read_symlink(link), "../runs/current.json");
  EXPECT_THAT(TempDir::entries_of(dir / "runs"), ElementsAre("current.json", "out.json"));
  EXPECT_THAT(TempDir::entries_of(dir / "latest"), ElementsAre("out.json"));
}

// A failed write through a link leaves the file it names as it was, and no temporary file.
TEST(AtomicFile, AFailedWriteThroughALinkLeavesTheFileItNamesUnchanged) {
  TempDir dir;
  const fs::path real = dir / "real.json", link = dir / "out.json";
  write_file(real, "kept\n");
  fs::create_symlink("real.json", link);
  {
    AtomicFile f(link);
    f.write("never committed\n");
  }  // destroyed without commit(), as when an export fails
  EXPECT_EQ(read_file(real), "kept\n");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_THAT(dir.entries(), ElementsAre("out.json", "real.json"));
}

// A file replaced keeps its permission bits, narrower or wider than the umask's default (022 here,
// which alone would make every one of them 0644), and the replacement is never more open than the
// old file while it is written; set-ID bits are not carried over. Expected: the mode set by chmod.
TEST(AtomicFile, ReplacingAFileKeepsItsPermissionBits) {
  TempDir dir;
  const UmaskScope umask(022);
  for (const mode_t mode : {0600, 0640, 0666, 0755, 0444, 0000}) {
    SCOPED_TRACE(mode);
    const fs::path target = dir / "out.json";
    write_file(target, "old\n");
    ASSERT_EQ(::chmod(target.c_str(), mode), 0);
    AtomicFile f(target);
    f.write("new\n");
    EXPECT_EQ(mode_of(temp_file_of(target)), mode);
    f.commit();
    EXPECT_EQ(read_file(target), "new\n");
    EXPECT_EQ(mode_of(target), mode);
    fs::remove(target);
  }
  const fs::path target = dir / "tool";
  write_file(target, "old\n");
  ASSERT_EQ(::chmod(target.c_str(), 04755), 0);
  write_file_atomic(target, "new\n");
  EXPECT_EQ(mode_of(target), 0755u);
}

// A new file gets what any new file gets: 0666 less the umask.
TEST(AtomicFile, ANewFileGetsTheUmasksMode) {
  TempDir dir;
  const UmaskScope umask(027);
  write_file_atomic(dir / "new.json", "x\n");
  EXPECT_EQ(mode_of(dir / "new.json"), 0640u);
}

// Replaced by root (as by `sudo candle-graph ...`), another user's file stays that user's, with
// its group, as `stat` reports them; only root may give a file away, so this runs as root only.
TEST(AtomicFile, ReplacingAnotherUsersFileAsRootKeepsItsOwnerAndGroup) {
  if (::geteuid() != 0) GTEST_SKIP() << "only root may give a file to another user";
  TempDir dir;
  const fs::path target = dir / "out.json";
  write_file(target, "old\n");
  constexpr uid_t kNobody = 65534;
  constexpr gid_t kNogroup = 65534;
  ASSERT_EQ(::chown(target.c_str(), kNobody, kNogroup), 0);
  write_file_atomic(target, "new\n");
  struct stat st {};
  ASSERT_EQ(::stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, kNobody);
  EXPECT_EQ(st.st_gid, kNogroup);
  EXPECT_EQ(read_file(target), "new\n");
}

}  // namespace
