// What the targets that take a trace/6 file as their input share: the document the reader makes
// of it. The targets that follow a command refusing untrusted traces (the exports, the evidence)
// take it only when health trusts it; bytes that are no (trusted) trace, most of what a mutator
// makes of one, are read as the recipe of one instead (generated_trace.hpp), so that every input
// reaches the code behind the reader. The reader's own errors are fuzz_trace_reader's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "candle_graph/error.hpp"
#include "candle_graph/health.hpp"
#include "candle_graph/trace.hpp"
#include "fuzz_support.hpp"
#include "generated_trace.hpp"

namespace candle_graph::fuzz {

enum class Traces { any, trusted };

inline TraceDocument trace_input(const std::uint8_t* data, std::size_t size, Traces which) {
  try {
    TraceDocument doc =
        parse_trace_text(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.jsonl");
    if (which == Traces::any || analyze_health(doc).trusted) return doc;
  } catch (const Error&) {
  }
  const std::string text = generated_trace(data, size);
  std::optional<TraceDocument> doc;
  try {
    doc = parse_trace_text(text, "generated.jsonl");
  } catch (const Error& e) {
    fail("the generated trace does not read", std::string(e.what()) + "\n" + text);
  }
  const TraceHealth health = analyze_health(*doc);
  if (!health.trusted)
    fail("the generated trace is not trusted", health.error_summary() + "\n" + text);
  return std::move(*doc);
}

// For LLVMFuzzerInitialize: a test hook's environment variable (a batch size), set once before
// the first input.
inline int set_test_hook(const char* name, const char* value) {
  ::setenv(name, value, 1);
  return 0;
}

}  // namespace candle_graph::fuzz
