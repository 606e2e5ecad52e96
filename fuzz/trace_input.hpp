// What the targets that take a trace/6 file as their whole input share: the document the reader
// makes of it. Inputs the reader refuses are left to fuzz_trace_reader, which checks its errors;
// the targets that follow a command refusing untrusted traces (the exports, the evidence) take
// only those health trusts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "candle_graph/error.hpp"
#include "candle_graph/health.hpp"
#include "candle_graph/trace.hpp"

namespace candle_graph::fuzz {

enum class Traces { any, trusted };

inline std::optional<TraceDocument> trace_input(const std::uint8_t* data, std::size_t size,
                                                Traces which) {
  std::optional<TraceDocument> doc;
  try {
    doc =
        parse_trace_text(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.jsonl");
  } catch (const Error&) {
    return std::nullopt;
  }
  if (which == Traces::trusted && !analyze_health(*doc).trusted) return std::nullopt;
  return doc;
}

// For LLVMFuzzerInitialize: a test hook's environment variable (a batch size), set once before
// the first input.
inline int set_test_hook(const char* name, const char* value) {
  ::setenv(name, value, 1);
  return 0;
}

}  // namespace candle_graph::fuzz
