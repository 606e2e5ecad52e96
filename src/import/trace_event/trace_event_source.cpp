#include "import/trace_event/trace_event_source.hpp"

#include <algorithm>
#include <ctime>

#include "candle_graph/error.hpp"
#include "import/trace_event/event_decoder.hpp"
#include "import/trace_event/event_scanner.hpp"
#include "import/trace_event/pipelined_scan.hpp"
#include "trace/memory_budget.hpp"

namespace candle_graph::import::trace_event {

ScannedTrace scan_trace_events(const std::filesystem::path& path, const ProgressCallback& progress,
                               unsigned threads) {
  const std::string name = path.string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw Error(ErrorKind::io, name, 0,
                std::filesystem::exists(path, ec) ? "not a regular file" : "no such file");
  }
  check_memory_budget(name, input_bytes(path), kTraceEventBytesPerInputByte);
  ScannedTrace t;
  EventDecoder decoder(name, t.model);
  const EventScanner::Result scan = threads > 1 ? scan_on_worker(path, decoder, progress)
                                                : EventScanner::scan(path, decoder, progress);
  decoder.finish();
  // The file's size misjudges files of very small events; their number does not.
  check_event_budget(name, t.model.slices.size() + t.model.memory.size(), kTraceEventBytesPerEvent);
  if (t.model.events == 0) throw Error(name, 0, "not a PyTorch profiler trace: it holds no events");
  t.source.file_name = path.filename().string();
  t.source.gzip = scan.gzip;
  t.source.bare_array = scan.layout == EventScanner::Layout::bare_array;
  t.source.bytes = scan.bytes;
  t.source.missing_array_end = scan.missing_array_end;
  t.source.skipped_top_level = scan.skipped_top_level;
  return t;
}

void add_ignored(RepairCounts& repairs, const std::map<std::string, std::uint64_t>& ignored) {
  // Categories come from the file: a bounded number of tags, each with a bounded key.
  constexpr std::size_t kMaxCategories = 32, kMaxKey = 64;
  std::size_t listed = 0;
  for (const auto& [cat, n] : ignored) {
    if (listed++ < kMaxCategories) {
      repairs["convert.ignored." + cat.substr(0, kMaxKey)] += n;
    } else {
      repairs["convert.ignored.other_categories"] += n;
    }
  }
}

void add_bad_values(RepairCounts& repairs, const BadValues& bad) {
  // Reasons are the decoder's fixed keys, never text from the file: the tags stay bounded.
  for (const auto& [reason, c] : bad.rejected()) repairs["convert.rejected." + reason] += c.events;
  for (const auto& [reason, c] : bad.repaired()) repairs["convert.repaired." + reason] += c.events;
}

std::vector<std::pair<std::string, std::uint64_t>> nonzero(const RepairCounts& repairs) {
  std::vector<std::pair<std::string, std::uint64_t>> out;
  for (const auto& [k, v] : repairs) {
    if (v > 0) out.emplace_back(k, v);
  }
  return out;
}

std::string iso_utc(std::int64_t epoch_ns) {
  if (epoch_ns < 0) epoch_ns = 0;
  const std::time_t secs = static_cast<std::time_t>(epoch_ns / 1000000000);
  const int ms = static_cast<int>((epoch_ns / 1000000) % 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
  return buf;
}

void OwnedTags::add(std::string key, std::string value) {
  for (const auto& [k, v] : tags_) {
    if (k == key) return;
  }
  tags_.emplace_back(std::move(key), std::move(value));
}

std::vector<Tag> OwnedTags::sorted() const {
  std::vector<Tag> out;
  out.reserve(tags_.size());
  for (const auto& [k, v] : tags_) out.push_back({k, v});
  std::sort(out.begin(), out.end(), [](const Tag& a, const Tag& b) { return a.key < b.key; });
  return out;
}

}  // namespace candle_graph::import::trace_event
