// libFuzzer target for the trace/6 reader: any bytes must end in a document or a clean Error
// (never a crash, a hang, a leak or a sanitizer report). A document that parses must survive
// health analysis, and writing it out and reading it back must give the same document.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "candle_graph/health.hpp"
#include "candle_graph/trace.hpp"

namespace {

[[noreturn]] void fail(const char* what, std::string_view detail) {
  std::fprintf(stderr, "fuzz_trace_reader: %s\n%.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace candle_graph;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  TraceDocument doc;
  try {
    doc = parse_trace_text(text, "fuzz.jsonl");
  } catch (const Error& e) {
    // Every rejection names the file: `fuzz.jsonl:LINE: ...` or `fuzz.jsonl: ...`.
    if (e.path() != "fuzz.jsonl" || e.message().empty()) fail("malformed error", e.what());
    return 0;
  }
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
