// Whole trace/6 lines → events for an EventSink: canonical lines through FastLineScanner, runs of
// other lines batched through simdjson (LineParser::parse_batch), irregular and overlong lines
// through the exact per-line path, which words every error (trace6.md §5.1). Results and messages
// do not depend on which path read a line, nor on where the caller cut its buffers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "trace/event_sink.hpp"
#include "trace/fast_line_scanner.hpp"
#include "trace/line_parser.hpp"

namespace candle_graph {

class LineFeeder {
 public:
  // `at_file_start`: the first bytes fed may hold a UTF-8 byte order mark, which is skipped.
  LineFeeder(std::string source, EventSink& sink, bool at_file_start = true)
      : source_(std::move(source)), sink_(&sink), at_file_start_(at_file_start) {}

  // Starts over on another piece of the file: line numbers count from its start again.
  void restart(EventSink& sink, bool at_file_start) {
    sink_ = &sink;
    at_file_start_ = at_file_start;
    line_ = 0;
  }

  // Feeds the lines of `data[0, size)`, which must be followed by at least 64 readable bytes
  // (simdjson's padding). Returns the bytes consumed: whole lines only, unless `final`.
  std::size_t feed(const char* data, std::size_t size, bool final);

  // Lines seen so far ('\n's consumed, plus a last unterminated line when fed as final).
  std::uint64_t lines() const noexcept { return line_; }

 private:
  void feed_region(const char* data, std::size_t pos, std::size_t region_end, std::size_t size,
                   bool final);
  void feed_slow(const char* data, std::size_t pos, std::size_t end, std::size_t size, bool final);
  void add_scanned(FastLineScanner::Kind kind, std::uint64_t line);
  std::size_t feed_lines(const char* data, std::size_t pos, std::size_t limit, std::size_t size,
                         bool final);

  std::string source_;
  EventSink* sink_;
  LineParser parser_;
  FastLineScanner scanner_;
  std::uint64_t line_ = 0;
  bool at_file_start_;
};

// trace6.md §5.1: whitespace around a line is not part of it.
std::string_view trim_line(std::string_view s) noexcept;

}  // namespace candle_graph
