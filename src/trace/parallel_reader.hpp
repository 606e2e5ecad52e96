// Reading a trace/6 file on several threads: the main thread cuts the file into chunks of whole
// lines, worker threads parse them (the expensive part: simdjson or the fast scanner), and the
// main thread replays each chunk's events into the one document assembler in file order. The
// document, and the first error and its line number, are the ones a single-threaded read gives.
#pragma once

#include <cstdint>
#include <string>

#include "candle_graph/trace_io.hpp"

namespace candle_graph {

// Reads the open file `fd` (`total` bytes, 0 when unknown) with `options.threads` workers.
TraceDocument parse_trace_in_parallel(int fd, const std::string& source, std::uint64_t total,
                                      const ReadOptions& options);

}  // namespace candle_graph
