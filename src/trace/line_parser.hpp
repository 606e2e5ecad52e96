// One trace/6 JSONL line → one TraceEvent, with serde-like strictness: unknown `kind` values,
// missing or duplicated fields, wrong types, bad enum strings, numbers out of range and invalid
// JSON are errors; unknown extra fields are ignored (but must still be valid JSON).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "candle_graph/trace.hpp"

namespace candle_graph {

class EventSink;

class LineParserBackend {
 public:
  struct BatchResult {
    std::size_t consumed;  // bytes fully handled; always the start of a line
    std::uint64_t lines;   // '\n' in those bytes
  };
  virtual ~LineParserBackend() = default;
  virtual const TraceEvent& parse(std::string_view line, std::size_t capacity,
                                  std::string_view source, std::uint64_t line_number) = 0;
  virtual BatchResult parse_batch(const char* data, std::size_t size, std::uint64_t lines_before,
                                  std::string_view source, EventSink& out) = 0;
};

// simdjson On-Demand is compiled for one instruction set at a time, so line_parser.cpp is built
// twice (AVX2 "haswell" and portable "fallback") and the CPU picks one at run time.
std::unique_ptr<LineParserBackend> make_line_parser_fallback();
std::unique_ptr<LineParserBackend> make_line_parser_haswell();  // only on x86-64 builds

class LineParser {
 public:
  LineParser();
  ~LineParser();
  LineParser(const LineParser&) = delete;
  LineParser& operator=(const LineParser&) = delete;

  // Name of the instruction-set variant in use ("haswell" or "fallback").
  static std::string_view variant();

  // Parses `line` (already trimmed, non-empty). `capacity` is how many bytes starting at
  // line.data() are readable (≥ line.size() + 64, simdjson's padding). The returned event views
  // the parser's internal buffers: valid until the next call. Throws Error(source, line_number).
  const TraceEvent& parse(std::string_view line, std::size_t capacity, std::string_view source,
                          std::uint64_t line_number) {
    return backend_->parse(line, capacity, source, line_number);
  }

  // Parses whole lines `data[0, size)` (`size` ends just after a '\n', at most kBatchBytes,
  // 64 readable bytes after it) with one simdjson stage 1 and adds their events to `out`
  // (`lines_before` = lines of the file before `data`). Stops at the start of the first line it
  // cannot accept as exactly one valid event: the caller re-reads from there with parse(), which
  // reports the exact error. Assembler errors (duplicate span…) propagate as usual.
  static constexpr std::size_t kBatchBytes = std::size_t{256} << 10;
  LineParserBackend::BatchResult parse_batch(const char* data, std::size_t size,
                                             std::uint64_t lines_before, std::string_view source,
                                             EventSink& out) {
    return backend_->parse_batch(data, size, lines_before, source, out);
  }

 private:
  std::unique_ptr<LineParserBackend> backend_;
};

}  // namespace candle_graph
