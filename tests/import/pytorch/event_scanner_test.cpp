// The streaming scanner reports the same events, top-level values and result wherever its chunk
// boundaries fall. Reference: the same file read in one default (4 MiB) chunk, and the number
// of events counted by nlohmann::json from the decompressed text (not by the scanner).
#include <gtest/gtest.h>
#include <zlib.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "import/trace_event/event_scanner.hpp"
#include "support/files.hpp"

namespace {

using candle_graph::import::trace_event::EventScanner;
namespace fs = std::filesystem;

struct Recorded : EventScanner::Handler {
  std::vector<std::string> items;
  void event(std::string_view bytes, std::uint64_t offset) override {
    items.push_back("E" + std::to_string(offset) + ":" + std::string(bytes));
  }
  void top_level_value(std::string_view key, std::string_view raw, std::uint64_t offset) override {
    items.push_back("T" + std::to_string(offset) + ":" + std::string(key) + "=" + std::string(raw));
  }
};

struct Scan {
  Recorded recorded;
  EventScanner::Result result;
  std::size_t progress_calls = 0;
};

Scan scan(const fs::path& path, std::size_t chunk) {
  Scan s;
  s.result = EventScanner::scan(
      path, s.recorded, [&s](std::uint64_t, std::uint64_t) { ++s.progress_calls; }, chunk);
  return s;
}

std::string decompressed(const fs::path& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  std::string text;
  char buf[1 << 16];
  for (int got; (got = gzread(f, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(got));
  gzclose(f);
  return text;
}

TEST(EventScanner, ChunkBoundariesAnywhereGiveTheSameScan) {
  for (const char* name : {"pytorch-chrome-trace/hta-cuda-event-sync-a100.json",
                           "pytorch-chrome-trace/hta-triton-culaunchkernel-a100.json.gz",
                           "pytorch-chrome-trace/hta-event-sync-multistream-a100.json.gz"}) {
    SCOPED_TRACE(name);
    const fs::path path = candle_graph::testing::shared_fixture(name);
    const Scan whole = scan(path, EventScanner::kDefaultChunkBytes);
    const auto json = nlohmann::json::parse(decompressed(path));
    ASSERT_EQ(
        whole.recorded.items.size() - static_cast<std::size_t>(std::count_if(
                                          whole.recorded.items.begin(), whole.recorded.items.end(),
                                          [](const std::string& i) { return i[0] == 'T'; })),
        json["traceEvents"].size());
    // Chunks of 1 byte put a boundary inside every token; the others at odd places.
    for (std::size_t chunk :
         {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{61}, std::size_t{4093}}) {
      SCOPED_TRACE(chunk);
      const Scan split = scan(path, chunk);
      EXPECT_EQ(split.recorded.items, whole.recorded.items);
      EXPECT_EQ(split.result.bytes, whole.result.bytes);
      EXPECT_EQ(split.result.gzip, whole.result.gzip);
      EXPECT_EQ(split.result.layout, whole.result.layout);
      EXPECT_EQ(split.result.skipped_top_level, whole.result.skipped_top_level);
      // One progress call per chunk read (the last, short or empty read included).
      EXPECT_GE(split.progress_calls, whole.result.bytes / chunk);
    }
  }
}

}  // namespace
