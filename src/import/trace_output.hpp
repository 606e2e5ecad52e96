// The converter's output: trace/6 events serialised by the library's own writer
// (append_event_json) and streamed to a temporary sibling that is renamed over the target only
// when complete, so the converted file is valid trace/6 JSONL by construction and never partial.
#pragma once

#include <filesystem>
#include <string>

#include "candle_graph/trace.hpp"
#include "output/atomic_file.hpp"

namespace candle_graph::import {

class TraceOutput {
 public:
  explicit TraceOutput(const std::filesystem::path& target) : file_(target) {}
  void emit(const TraceEvent& event) {
    append_event_json(buffer_, event);
    buffer_.push_back('\n');
    if (buffer_.size() >= (std::size_t{1} << 20)) flush();
  }
  void commit() {
    flush();
    file_.commit();
  }

 private:
  void flush() {
    file_.write(buffer_);
    buffer_.clear();
  }
  output::AtomicFile file_;
  std::string buffer_;
};

// What the assembly stages share: the run's identity, built from the source.
struct SourceInfo {
  std::string file_name;  // input file name, no directories
  std::string format;     // "kineto", "legacy-autograd-profiler", "candle-graph-chrome"
  bool gzip = false;
  bool missing_array_end = false;
  std::uint64_t bytes = 0;
  std::uint64_t skipped_top_level = 0;
};

}  // namespace candle_graph::import
