// Reading and writing trace/6 JSONL files (docs/format/trace6.md §5.1, §5.3).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "candle_graph/trace_document.hpp"

namespace candle_graph {

// Progress of a long read: bytes of the file consumed so far and the file's size. Every callback
// of the library is a std::function (an empty one is not called).
using ProgressCallback = std::function<void(std::uint64_t done, std::uint64_t total)>;

struct ReadOptions {
  // Called now and then on long reads; with `threads` above 1, by whichever reading thread is
  // placing a chunk, one call at a time and in file order.
  ProgressCallback progress;
  // Threads that read (trace/6), the calling one included: above 1, each parses chunks of lines
  // and places their events into the document in file order, taking turns; the result is the
  // same whatever the number.
  unsigned threads = 1;
};

// Parse and validate a trace/6 JSONL file. Errors name the path and the 1-based line.
TraceDocument parse_trace(const std::filesystem::path& path, const ReadOptions& options = {});
// Same, over bytes in memory; `source` is the name used in error messages.
TraceDocument parse_trace_text(std::string_view text, std::string_view source = "<memory>");

// Parse one event line (no document-level validation). Views point into `arena`.
TraceEvent parse_event_line(std::string_view line, Arena& arena, std::string_view source = "<line>",
                            std::uint64_t line_number = 1);

// trace6.md §5.3 to_events: meta, each span_start followed by its span_end, then ops, tensors,
// memory, device_memory, gradients, edges.
std::vector<TraceEvent> to_events(const TraceDocument& doc);
// Whole document as JSONL text.
std::string write_jsonl_string(const TraceDocument& doc);
// Write the document atomically (temp file + rename), creating parent directories.
void write_jsonl(const std::filesystem::path& path, const TraceDocument& doc);

}  // namespace candle_graph
