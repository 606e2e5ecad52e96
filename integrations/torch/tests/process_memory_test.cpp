// The device_memory checkpoint's figures (process_memory.cpp) against the same counters read
// independently, the long way, from /proc/self/status and /proc/meminfo with iostreams.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "../src/process_memory.hpp"

namespace {

std::uint64_t kb_field(const char* file, const std::string& field) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field, 0) == 0) {
      std::istringstream rest(line.substr(field.size()));
      std::uint64_t kb = 0;
      rest >> kb;
      return kb * 1024;
    }
  return 0;
}

std::uint64_t distance(std::uint64_t a, std::uint64_t b) {
  return a > b ? a - b : b - a;
}

TEST(ProcessMemory, MatchesVmRssAndMemAvailable) {
  const auto mem = candle_graph::libtorch::detail::read_process_memory();
  ASSERT_TRUE(mem.has_value());
  const std::uint64_t rss = kb_field("/proc/self/status", "VmRSS:");
  const std::uint64_t available = kb_field("/proc/meminfo", "MemAvailable:");
  ASSERT_GT(rss, 0u);
  ASSERT_GT(available, 0u);
  // The two reads are microseconds apart; the process (iostreams) and the machine may move a
  // little in between, far less than these bounds, while a wrong field or unit (pages vs kB vs
  // bytes) is off by a factor of 4 or more.
  EXPECT_LE(distance(mem->used_bytes, rss), std::uint64_t{2} << 20)
      << mem->used_bytes << " vs VmRSS " << rss;
  EXPECT_LE(distance(mem->free_bytes, available), std::uint64_t{64} << 20)
      << mem->free_bytes << " vs MemAvailable " << available;
}

// A forked child reads its own resident set, not its parent's (e.g. through a descriptor of
// /proc/self/statm opened before the fork). The child grows its resident set by 64 MiB, which
// the parent's figures would not show.
TEST(ProcessMemory, ForkedChildReadsItsOwnResidentSet) {
  ASSERT_TRUE(candle_graph::libtorch::detail::read_process_memory().has_value());  // opens them
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    constexpr std::size_t kGrow = std::size_t{64} << 20;
    char* block = new char[kGrow];
    std::memset(block, 1, kGrow);
    const auto mem = candle_graph::libtorch::detail::read_process_memory();
    const std::uint64_t rss = kb_field("/proc/self/status", "VmRSS:");
    const bool ok = mem && distance(mem->used_bytes, rss) <= (std::uint64_t{2} << 20);
    volatile char keep = block[kGrow - 1];
    (void)keep;
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child read a resident set that is not its own";
}

}  // namespace
