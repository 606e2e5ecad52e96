// Sizes the trace readers share: the whole-file reader (reader.cpp), the chunked parallel one
// (parallel_reader.cpp) and the line feeder both hand their buffers to.
#pragma once

#include <cstddef>
#include <cstdint>

namespace candle_graph::read_sizes {

// Readable bytes after the data that simdjson may touch (simdjson::SIMDJSON_PADDING).
inline constexpr std::size_t kPadding = 64;
// Bytes read before the document reserves its tables from the kind mix seen so far.
inline constexpr std::size_t kReserveAfter = std::size_t{4} << 20;
// Progress is reported every 64 MiB read.
inline constexpr std::uint64_t kProgressEvery = 64ull << 20;
// The longest line a trace/6 file may hold. An event line is a few hundred bytes, the longest
// real ones (ops with many inputs, long stacks) some KiB, and lines of 100 MiB are still read
// (ReaderHostile.HundredMegabyteLine); without a cap, a file with no newline (10 GB of zeros, a
// binary file) grew one buffer until simdjson's 4 GiB limit, 17 GB of memory.
inline constexpr std::size_t kMaxLineBytes = std::size_t{256} << 20;

}  // namespace candle_graph::read_sizes
