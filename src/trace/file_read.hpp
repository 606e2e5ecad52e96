// Reading an open trace/6 file, once parse_trace has opened it and checked what it may cost.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "candle_graph/error.hpp"
#include "candle_graph/trace_io.hpp"

namespace candle_graph {

// Reads the open file `fd`, which held `total` bytes when it was opened (0: no regular file, its
// size unknown), on `options.threads` threads (parse_trace_in_parallel) or on this one.
TraceDocument read_trace_file(int fd, const std::string& source, std::uint64_t total,
                              const ReadOptions& options);

// The error of a read that met the file's end at byte `end` (the file ends there or before),
// short of the `size` bytes the file held when the read began: another program truncated or
// rewrote it meanwhile, and what was read is no trace the file ever held (without this check, a
// read cut at a line's end looked like a whole, shorter trace).
Error shrank_while_read(const std::string& source, std::uint64_t size, std::uint64_t end);

// The error of line `line`, which runs past read_sizes::kMaxLineBytes (tests may lower that
// through CANDLE_GRAPH_TEST_MAX_LINE_BYTES: max_line_bytes()).
Error line_too_long(const std::string& source, std::uint64_t line);
std::size_t max_line_bytes();

}  // namespace candle_graph
