// The streaming scanner reports the same events, top-level values and result wherever its chunk
// boundaries fall. Reference: the same file read in one default (4 MiB) chunk, and the number
// of events counted by nlohmann::json from the decompressed text (not by the scanner).
#include <gtest/gtest.h>
#include <zlib.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "candle_graph/error.hpp"
#include "import/trace_event/event_scanner.hpp"
#include "support/files.hpp"
#include "support/temp_dir.hpp"

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

// An event, a top-level key or a top-level value longer than the cap is refused where it starts
// (offsets found in the text by std::string::find, not by the scanner), whether or not it crosses
// chunks; at the cap's size or under it, it is read.
TEST(EventScanner, ValuesLongerThanTheCapAreRefused) {
  candle_graph::testing::TempDir dir;
  const std::string event = R"({"ph":"X","name":")" + std::string(3000, 'a') + R"("})";
  const std::string with_event = R"({"traceEvents":[)" + event + "]}";
  const std::string with_value =
      R"({"traceEvents":[],"otherData":")" + std::string(3000, 'b') + "\"}";
  const std::string with_key = R"({")" + std::string(3000, 'k') + R"(":1,"traceEvents":[]})";
  struct Case {
    std::string text, what;
    std::size_t offset;
  };
  for (const Case& c : {Case{with_event, "an event", with_event.find("{\"ph\"")},
                        Case{with_value, "the value of \"otherData\"", with_value.find("\"bbb")},
                        Case{with_key, "a top-level key", with_key.find("\"kkk")}}) {
    SCOPED_TRACE(c.what);
    const fs::path path = dir / "long.json";
    ASSERT_TRUE(candle_graph::testing::write_file(path, c.text));
    for (const std::size_t chunk : {std::size_t{1000}, std::size_t{61}}) {
      Recorded recorded;
      try {
        EventScanner::scan(path, recorded, {}, chunk, 2000);
        ADD_FAILURE() << "accepted with chunks of " << chunk;
      } catch (const candle_graph::Error& e) {
        EXPECT_EQ(e.message(), c.what + " longer than 2000 bytes, which no profiler trace holds, " +
                                   "starts at byte " + std::to_string(c.offset))
            << "chunks of " << chunk;
      }
      // The value is 3000 bytes and a few: a cap of 4000 reads it.
      Recorded read;
      EXPECT_NO_THROW(EventScanner::scan(path, read, {}, chunk, 4000)) << "chunks of " << chunk;
    }
  }
}

}  // namespace
