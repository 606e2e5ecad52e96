// One pass over a Chrome Trace Event JSON file (plain or gzip) into the compact model: the
// scanner splits it into events, the decoder reduces each one. What the PyTorch importer and the
// Chrome-export importer share before their mappings differ.
#pragma once

#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "candle_graph/importer.hpp"
#include "import/trace_event/event_model.hpp"

namespace candle_graph::import::trace_event {

// What the mappings need to know about the file itself.
struct SourceInfo {
  std::string file_name;  // input file name, no directories
  std::string format;     // "kineto", "legacy-autograd-profiler", "candle-graph-chrome"
  bool gzip = false;
  bool bare_array = false;         // the legacy profiler's layout (else a Kineto object)
  bool missing_array_end = false;  // a bare array without its closing `]`, tolerated
  std::uint64_t bytes = 0;         // decompressed bytes read
  std::uint64_t skipped_top_level = 0;
};

struct ScannedTrace {
  Model model;
  SourceInfo source;
};

// Scans and decodes `path`. Throws Error naming the file (and the byte offset of malformed JSON)
// when it is not Chrome Trace Event JSON, or holds no events at all. With `threads` above 1 the
// scanner runs on a second thread, beside the decoder; the result and the errors are the same.
ScannedTrace scan_trace_events(const std::filesystem::path& path, const ProgressCallback& progress,
                               unsigned threads = 1);

// Counts of what a mapping repaired, dropped or left unmapped, by `convert.<reason>` key.
using RepairCounts = std::map<std::string, std::uint64_t>;

// `convert.ignored.<category>` counts, at most 32 categories (the rest summed).
void add_ignored(RepairCounts& repairs, const std::map<std::string, std::uint64_t>& ignored);
// `convert.rejected.<reason>` and `convert.repaired.<reason>` counts of events with bad values.
void add_bad_values(RepairCounts& repairs, const BadValues& bad);
// The non-zero counts as sorted (key, count) pairs, as ImportReport::repairs holds them.
std::vector<std::pair<std::string, std::uint64_t>> nonzero(const RepairCounts& repairs);

// "YYYY-MM-DDTHH:MM:SS.mmmZ" for Unix-epoch nanoseconds (0 for negative values).
std::string iso_utc(std::int64_t epoch_ns);

// Tag strings for a meta event: the tags view the strings, which live as long as this.
class OwnedTags {
 public:
  // Adds (key, value) unless the key is already present (the first value wins).
  void add(std::string key, std::string value);
  // The tags sorted by key, viewing this object's strings.
  std::vector<Tag> sorted() const;

 private:
  std::deque<std::pair<std::string, std::string>> tags_;  // stable addresses for the views
};

}  // namespace candle_graph::import::trace_event
