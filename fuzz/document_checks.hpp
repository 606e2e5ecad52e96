// Checks every importer's document must pass: what an importer returns is a trace/6 document,
// so our writer must turn it into text our reader accepts, and reading that text back must give
// the same document (the converted trace a user writes with `convert` must open again).
#pragma once

#include <string>
#include <string_view>

#include "candle_graph/error.hpp"
#include "candle_graph/trace.hpp"
#include "fuzz_support.hpp"

namespace candle_graph::fuzz {

inline void check_round_trip(const TraceDocument& doc) {
  const std::string written = write_jsonl_string(doc);
  try {
    const TraceDocument again = parse_trace_text(written, "rewritten.jsonl");
    if (!(again == doc)) fail("parse(write(imported)) != imported", written);
  } catch (const Error& e) {
    fail("the writer produced a trace the reader rejects", std::string(e.what()) + "\n" + written);
  }
}

// A rejection must name the input file and say something.
inline void check_error(const Error& e, std::string_view file_name) {
  const std::string what = e.what();
  if (e.message().empty() || what.find(file_name) == std::string::npos)
    fail("an error that does not name the file", what);
}

}  // namespace candle_graph::fuzz
