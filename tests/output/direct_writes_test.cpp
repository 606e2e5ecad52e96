// output::DirectWrites: a file written through it holds exactly the bytes given, in order,
// whether direct writing lasts to the end or stops on a slow disk, and direct writing is on only
// between start and the end. The expected bytes are the pieces kept here in memory; the file is
// read back through std::ifstream, and whether the file system takes O_DIRECT at all is asked of
// open(2) directly, not of the code under test.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <string>

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

// Pieces of odd sizes, so that stages end inside pieces and the tail is not a whole block.
std::string random_piece(std::mt19937& rng) {
  std::string piece(700'001 + rng() % 900'000, '\0');
  for (char& c : piece) c = static_cast<char>('a' + rng() % 26);
  return piece;
}

TEST(DirectWrites, EveryByteArrivesInOrderAcrossStagesAndATail) {
  TempDir dir;
  const fs::path path = dir / "out";
  OpenFile file(path);
  ASSERT_GE(file.fd(), 0);
  auto direct = DirectWrites::start(file.fd(), std::chrono::hours(1));  // never too slow
  ASSERT_EQ(direct != nullptr, takes_direct_writes(dir.path()));
  if (!direct) GTEST_SKIP() << "no O_DIRECT on " << dir.path();
  EXPECT_TRUE(direct_flag(file.fd()));
  std::mt19937 rng(7);
  std::string expected;
  while (expected.size() < 3 * DirectWrites::kStage + DirectWrites::kStage / 2) {
    const std::string piece = random_piece(rng);
    EXPECT_TRUE(direct->write(piece));
    expected += piece;
  }
  direct->finish();
  EXPECT_FALSE(direct_flag(file.fd()));
  EXPECT_EQ(read_file(path), expected);
}

// With every stage "slow", the fourth one stops direct writing (the average is judged from four
// stages on): write() says so, and the caller writes on through the page cache.
TEST(DirectWrites, ASlowDiskSendsTheRestThroughThePageCache) {
  TempDir dir;
  const fs::path path = dir / "out";
  OpenFile file(path);
  ASSERT_GE(file.fd(), 0);
  auto direct = DirectWrites::start(file.fd(), std::chrono::nanoseconds(0));
  ASSERT_EQ(direct != nullptr, takes_direct_writes(dir.path()));
  if (!direct) GTEST_SKIP() << "no O_DIRECT on " << dir.path();
  std::mt19937 rng(11);
  std::string expected;
  bool direct_on = true;
  while (direct_on) {
    const std::string piece = random_piece(rng);
    direct_on = direct->write(piece);
    expected += piece;
    ASSERT_LT(expected.size(), 6 * DirectWrites::kStage) << "direct writing never stopped";
  }
  EXPECT_GE(expected.size(), 4 * DirectWrites::kStage);  // not judged on fewer stages
  EXPECT_FALSE(direct_flag(file.fd()));
  const std::string rest = random_piece(rng);
  ASSERT_EQ(::write(file.fd(), rest.data(), rest.size()), static_cast<ssize_t>(rest.size()));
  expected += rest;
  EXPECT_EQ(read_file(path), expected);
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
