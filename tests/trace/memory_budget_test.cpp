// The memory bound: the limit from CANDLE_GRAPH_MEMORY_LIMIT (sizes in powers of 1024, worked
// out by hand below) or MemAvailable, the decompressed size of a gzip input from its trailer,
// and the error of kind `resource` that names the file when the estimate is over the limit.
#include <gmock/gmock.h>
#include <zlib.h>

#include <cstdlib>

#include "candle_graph/error.hpp"
#include "support/files.hpp"
#include "support/temp_dir.hpp"
#include "trace/memory_budget.hpp"

namespace {

using candle_graph::check_memory_budget;
using candle_graph::ErrorKind;
using candle_graph::kMemoryLimitVariable;
using candle_graph::memory_limit;
using candle_graph::testing::TempDir;
using ::testing::HasSubstr;

class MemoryBudget : public ::testing::Test {
 protected:
  void TearDown() override { ::unsetenv(kMemoryLimitVariable); }
  static void set(const char* value) { ::setenv(kMemoryLimitVariable, value, 1); }
};

TEST_F(MemoryBudget, LimitFromTheEnvironment) {
  set("1000");
  EXPECT_EQ(memory_limit(), 1000u);
  set("64K");
  EXPECT_EQ(memory_limit(), 64u * 1024);
  set("3M");
  EXPECT_EQ(memory_limit(), 3u * 1024 * 1024);
  set("2GB");
  EXPECT_EQ(memory_limit(), 2ull * 1024 * 1024 * 1024);
  set("1t");
  EXPECT_EQ(memory_limit(), 1ull << 40);
  set("unlimited");
  EXPECT_EQ(memory_limit(), std::nullopt);
  set("0");
  EXPECT_EQ(memory_limit(), std::nullopt);
  for (const char* bad : {"lots", "12X", "-5", "99999999999T"}) {
    set(bad);
    try {
      (void)memory_limit();
      ADD_FAILURE() << bad << " was accepted";
    } catch (const candle_graph::Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage) << bad;
      EXPECT_THAT(e.what(), HasSubstr(kMemoryLimitVariable));
    }
  }
}

TEST_F(MemoryBudget, DefaultIsTheAvailableMemory) {
  // MemAvailable read here independently: the line "MemAvailable: N kB".
  const std::string meminfo = candle_graph::testing::read_file("/proc/meminfo");
  const auto at = meminfo.find("MemAvailable:");
  if (at == std::string::npos) GTEST_SKIP() << "no MemAvailable in /proc/meminfo";
  const std::uint64_t kib = std::strtoull(meminfo.c_str() + at + 13, nullptr, 10);
  const auto limit = memory_limit();
  ASSERT_TRUE(limit.has_value());
  // Memory comes and goes between the two reads: within 10 %.
  EXPECT_NEAR(static_cast<double>(*limit), static_cast<double>(kib) * 1024.0,
              static_cast<double>(kib) * 1024.0 * 0.1);
}

TEST_F(MemoryBudget, OverTheLimitIsAResourceErrorNamingTheFile) {
  set("1M");
  // 1 MiB at 2 bytes per input byte: 512 KiB of input fits, one byte more does not.
  EXPECT_NO_THROW(check_memory_budget("t.json", 512 * 1024, 2.0));
  try {
    check_memory_budget("t.json", 512 * 1024 + 1, 2.0);
    ADD_FAILURE() << "no error";
  } catch (const candle_graph::Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::resource);
    EXPECT_EQ(e.path(), "t.json");
    EXPECT_THAT(e.what(), HasSubstr("more than the 1 MiB that CANDLE_GRAPH_MEMORY_LIMIT allows"));
  }
}

TEST_F(MemoryBudget, WatchStopsAReadOverTheLimit) {
  set("unlimited");
  candle_graph::MemoryWatch unlimited("t.json");
  EXPECT_NO_THROW(unlimited.check(5));
  // Any process holds more than 1 KiB: the first check stops it, naming the byte reached.
  set("1K");
  candle_graph::MemoryWatch watch("t.json");
  try {
    watch.check(4096);
    ADD_FAILURE() << "no error";
  } catch (const candle_graph::Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::resource);
    EXPECT_EQ(e.path(), "t.json");
    EXPECT_THAT(e.what(), HasSubstr("reading stopped at byte 4096"));
  }
}

TEST_F(MemoryBudget, GzipInputIsMeasuredDecompressed) {
  TempDir dir;
  const std::string text(1 << 20, 'a');  // 1 MiB of one byte compresses to about 1 KiB
  const auto path = dir / "t.json.gz";
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  gzclose(f);
  ASSERT_LT(std::filesystem::file_size(path), text.size() / 10);
  EXPECT_EQ(candle_graph::input_bytes(path), text.size());
  const auto plain = dir.write("t.json", "{}");
  EXPECT_EQ(candle_graph::input_bytes(plain), 2u);
}

}  // namespace
