// output::DirectWrites: a file written through it holds exactly the bytes given, in order,
// whether direct writing lasts to the end or stops on a slow disk, and direct writing is on only
// between start and the end. The expected bytes are the pieces kept here in memory; the file is
// read back through std::ifstream, and whether the file system takes O_DIRECT at all is asked of
// open(2) directly, not of the code under test.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <random>
#include <string>
#include <system_error>
#include <vector>

#include "output/direct_writes.hpp"
#include "support/files.hpp"
#include "support/temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using candle_graph::output::DirectWrites;
using candle_graph::testing::read_file;
using candle_graph::testing::takes_direct_writes;
using candle_graph::testing::TempDir;

bool direct_flag(int fd) {
  return (::fcntl(fd, F_GETFL) & O_DIRECT) != 0;
}

class OpenFile {
 public:
  explicit OpenFile(const fs::path& p)
      : fd_(::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600)) {}
  ~OpenFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

// A new, empty file in a scratch directory, open for writing.
struct ScratchFile {
  TempDir dir;
  fs::path path = dir / "out";
  OpenFile file{path};
};

// Pieces of odd sizes, so that stages end inside pieces and the tail is not a whole block.
std::string random_piece(std::mt19937& rng) {
  std::string piece(700'001 + rng() % 900'000, '\0');
  for (char& c : piece) c = static_cast<char>('a' + rng() % 26);
  return piece;
}

TEST(DirectWrites, EveryByteArrivesInOrderAcrossStagesAndATail) {
  ScratchFile out;
  ASSERT_GE(out.file.fd(), 0);
  auto direct = DirectWrites::start(out.file.fd(), std::chrono::hours(1));  // never too slow
  ASSERT_EQ(direct != nullptr, takes_direct_writes(out.dir.path()));
  if (!direct) GTEST_SKIP() << "no O_DIRECT on " << out.dir.path();
  EXPECT_TRUE(direct_flag(out.file.fd()));
  std::mt19937 rng(7);
  std::string expected;
  while (expected.size() < 3 * DirectWrites::kStage + DirectWrites::kStage / 2) {
    const std::string piece = random_piece(rng);
    EXPECT_TRUE(direct->write(piece));
    expected += piece;
  }
  direct->finish();
  EXPECT_FALSE(direct_flag(out.file.fd()));
  EXPECT_EQ(read_file(out.path), expected);
}

// The disk's pace is the median stage's (the upper middle of an even count): one stage held up
// among quick ones is no slow disk, though it lifts their mean past the limit; half or more of
// them slow is. Each expectation is the list sorted by hand and its middle read off.
TEST(DirectWrites, OneStageHeldUpIsNoSlowDiskButMostStagesSlowAre) {
  using std::chrono::milliseconds;
  using std::chrono::nanoseconds;
  const auto too_slow = [](std::vector<nanoseconds> times) {
    return DirectWrites::too_slow(times, milliseconds(8));
  };
  EXPECT_FALSE(too_slow({milliseconds(3), milliseconds(30), milliseconds(3), milliseconds(3)}));
  EXPECT_FALSE(too_slow({milliseconds(8), milliseconds(8), milliseconds(8), milliseconds(8)}));
  EXPECT_TRUE(too_slow({milliseconds(9), milliseconds(3), milliseconds(10), milliseconds(12)}));
  EXPECT_TRUE(too_slow({milliseconds(3), milliseconds(9), milliseconds(3), milliseconds(9)}));
  EXPECT_FALSE(too_slow(
      {milliseconds(2), milliseconds(9), milliseconds(3), milliseconds(9), milliseconds(1)}));
  EXPECT_FALSE(too_slow({}));
}

// With every stage "slow", the sixth one stops direct writing (two stages of warm-up are not
// judged, and the median is judged from four stages on): write() says so, and the caller writes
// on through the page cache.
TEST(DirectWrites, ASlowDiskSendsTheRestThroughThePageCache) {
  ScratchFile out;
  ASSERT_GE(out.file.fd(), 0);
  auto direct = DirectWrites::start(out.file.fd(), std::chrono::nanoseconds(0));
  ASSERT_EQ(direct != nullptr, takes_direct_writes(out.dir.path()));
  if (!direct) GTEST_SKIP() << "no O_DIRECT on " << out.dir.path();
  std::mt19937 rng(11);
  std::string expected;
  bool direct_on = true;
  while (direct_on) {
    const std::string piece = random_piece(rng);
    direct_on = direct->write(piece);
    expected += piece;
    ASSERT_LT(expected.size(), 8 * DirectWrites::kStage) << "direct writing never stopped";
  }
  // Not judged on fewer stages: the one that stopped it was the sixth.
  EXPECT_GE(expected.size(), 6 * DirectWrites::kStage);
  EXPECT_LT(expected.size(), 7 * DirectWrites::kStage);
  EXPECT_FALSE(direct_flag(out.file.fd()));
  const std::string rest = random_piece(rng);
  ASSERT_EQ(::write(out.file.fd(), rest.data(), rest.size()), static_cast<ssize_t>(rest.size()));
  expected += rest;
  EXPECT_EQ(read_file(out.path), expected);
}

// A stage the disk does not take (here the file-size limit, a stand-in for a full disk: the
// direct write is cut short or refused) is written on through the page cache, where the same
// failure is thrown, and the file holds exactly the bytes that fit.
TEST(DirectWrites, AStageTheDiskRefusesIsThrownAndWhatFitsIsKept) {
  ScratchFile out;
  ASSERT_GE(out.file.fd(), 0);
  auto direct = DirectWrites::start(out.file.fd(), std::chrono::hours(1));  // never too slow
  if (!direct) GTEST_SKIP() << "no O_DIRECT on " << out.dir.path();
  // Past the limit a write fails with EFBIG instead of raising SIGXFSZ, which would end the test.
  const std::size_t limit = 2 * DirectWrites::kStage + 12'345;  // inside the third stage
  struct sigaction ignore {
  }, before{};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGXFSZ, &ignore, &before), 0);
  rlimit old_limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  rlimit low = old_limit;
  low.rlim_cur = limit;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &low), 0);
  std::mt19937 rng(5);
  std::string expected;
  int error = 0;
  try {
    while (expected.size() < 6 * DirectWrites::kStage) {
      const std::string piece = random_piece(rng);
      expected += piece;
      direct->write(piece);
    }
    direct->finish();
  } catch (const std::system_error& e) {
    error = e.code().value();
  }
  direct.reset();
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  ::sigaction(SIGXFSZ, &before, nullptr);
  EXPECT_EQ(error, EFBIG);
  ASSERT_GT(expected.size(), limit);
  const std::string written = read_file(out.path);
  EXPECT_EQ(written.size(), limit);
  // Not EXPECT_EQ: a failure would print megabytes.
  EXPECT_TRUE(written == expected.substr(0, limit)) << "the file is not the bytes that fit";
}

TEST(DirectWrites, AnUnalignedOffsetKeepsThePageCache) {
  TempDir dir;
  OpenFile file(dir / "out");
  ASSERT_GE(file.fd(), 0);
  ASSERT_EQ(::write(file.fd(), "header", 6), 6);
  EXPECT_EQ(DirectWrites::start(file.fd()), nullptr);
  EXPECT_FALSE(direct_flag(file.fd()));
}

}  // namespace
