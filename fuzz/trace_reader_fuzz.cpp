// libFuzzer target for the trace/6 reader: any bytes must end in a document or a clean Error
// (never a crash, a hang, a leak or a sanitizer report). A document that parses must survive
// health analysis, and writing it out and reading it back must give the same document. Every
// line the reader's fast scanner takes must read to the same event through the simdjson path
// alone (parse_event_line), which never uses the scanner; and every line of a trace the reader
// accepts (batched, many lines to one stage 1) must be accepted by that path on its own.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "candle_graph/health.hpp"
#include "candle_graph/trace.hpp"
#include "trace/fast_line_scanner.hpp"
#include "trace/line_feeder.hpp"

namespace {

[[noreturn]] void fail(const char* what, std::string_view detail) {
  std::fprintf(stderr, "fuzz_trace_reader: %s\n%.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

// Each line (with its '\n' and 64 bytes after it, as in the reader's buffer) through the scanner;
// when it takes the line, the simdjson path must take it too, with an equal event.
void check_fast_scanner(std::string_view text) {
  using namespace candle_graph;
  FastLineScanner scanner;
  Arena arena;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) break;  // the reader scans whole lines only
    std::string buf(text.substr(pos, nl + 1 - pos));
    const std::size_t size = buf.size();
    buf.append(64, ' ');
    const FastLineScanner::Result r = scanner.scan(buf.data());
    if (r.kind != FastLineScanner::Kind::none) {
      if (r.next != buf.data() + size) fail("fast scanner: wrong line end", buf);
      std::string_view line(buf.data(), size - 1);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      try {
        const TraceEvent slow = parse_event_line(line, arena);
        if (!(slow == scanner.event(r.kind))) fail("fast scanner: different event", line);
      } catch (const Error& e) {
        fail("fast scanner took a line the simdjson path rejects", std::string(e.what()));
      }
    }
    pos = nl + 1;
  }
}

// The reader takes most lines in batches; each line it accepted must parse alone as well.
void check_lines_parse_alone(std::string_view text) {
  using namespace candle_graph;
  Arena arena;
  std::uint64_t line_number = 0;
  std::size_t pos = 0;
  if (text.starts_with("\xEF\xBB\xBF")) pos = 3;  // the reader skips a byte-order mark
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    ++line_number;
    const std::string_view line = trim_line(text.substr(pos, nl - pos));
    if (!line.empty()) {
      try {
        (void)parse_event_line(line, arena, "fuzz.jsonl", line_number);
      } catch (const Error& e) {
        fail("the reader accepted a line the per-line path rejects", std::string(e.what()));
      }
    }
    pos = nl + 1;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace candle_graph;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check_fast_scanner(text);
  TraceDocument doc;
  try {
    doc = parse_trace_text(text, "fuzz.jsonl");
  } catch (const Error& e) {
    // Every rejection names the file: `fuzz.jsonl:LINE: ...` or `fuzz.jsonl: ...`.
    if (e.path() != "fuzz.jsonl" || e.message().empty()) fail("malformed error", e.what());
    return 0;
  }
  check_lines_parse_alone(text);
  const TraceHealth health = analyze_health(doc);
  if (health.trusted != (health.error_summary().empty())) fail("trusted flag disagrees", "");

  const std::string written = write_jsonl_string(doc);
  try {
    const TraceDocument again = parse_trace_text(written, "rewritten.jsonl");
    if (!(again == doc)) fail("parse(write(doc)) != doc", written);
    if (write_jsonl_string(again) != written) fail("write is not a fixed point", written);
  } catch (const Error& e) {
    fail("the writer produced a trace the reader rejects", std::string(e.what()) + "\n" + written);
  }
  return 0;
}
