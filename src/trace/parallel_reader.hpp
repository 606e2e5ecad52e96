// Reading a trace/6 file on several threads: the file is cut into chunks of whole lines; each
// thread parses one chunk at a time (the expensive part: simdjson or the fast scanner) and, at
// the chunk's turn, places its events into the one document assembler, so that they arrive in
// file order. The document, and the first error and its line number, are the ones a
// single-threaded read gives.
#pragma once

#include <cstdint>
#include <string>

#include "candle_graph/trace_io.hpp"

namespace candle_graph {

// Reads the open file `fd` (`total` bytes, 0 when unknown) on `options.threads` threads, the
// calling one included.
TraceDocument parse_trace_in_parallel(int fd, const std::string& source, std::uint64_t total,
                                      const ReadOptions& options);

}  // namespace candle_graph
