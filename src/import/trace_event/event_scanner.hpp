// Streams a PyTorch profiler trace (plain or gzip, through zlib) in chunks and splits it into
// single event objects without building a DOM of the file: a small scanner that tracks strings,
// escapes and nesting depth. Kineto writes an object whose `traceEvents` array holds the events;
// the legacy autograd profiler writes a bare array of events. Memory stays at one chunk plus the
// bytes of one event that crosses a chunk boundary.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "candle_graph/trace_io.hpp"

namespace candle_graph::import::trace_event {

class EventScanner {
 public:
  class Handler {
   public:
    virtual ~Handler() = default;
    // One complete event object (`{...}`); `offset` = its first byte in the (decompressed) stream.
    virtual void event(std::string_view bytes, std::uint64_t offset) = 0;
    // A top-level key of the Kineto object other than traceEvents that the converter reads
    // (otherData, traceName, baseTimeNanoseconds, ...), with its raw JSON value.
    virtual void top_level_value(std::string_view key, std::string_view raw,
                                 std::uint64_t offset) = 0;
  };

  enum class Layout { kineto_object, bare_array };
  struct Result {
    Layout layout = Layout::kineto_object;
    bool gzip = false;
    std::uint64_t bytes = 0;              // decompressed bytes read
    bool missing_array_end = false;       // bare array without its closing `]` (tolerated)
    std::uint64_t skipped_top_level = 0;  // top-level keys ignored (INFO, ...)
  };

  // The decompressed bytes read at a time; events crossing a chunk are carried over.
  static constexpr std::size_t kDefaultChunkBytes = std::size_t{4} << 20;
  // The longest event, top-level key or top-level value read (the one kept whole while the next
  // bytes come). A profiler event is some hundred bytes, its longest some KiB; without a cap one
  // event of a 1.5 GB name took 4.4 GB of memory and 19 s before it was refused.
  static constexpr std::size_t kMaxValueBytes = std::size_t{256} << 20;

  // Throws Error(path, 0, "... at byte N") when the file is not JSON of either layout, or holds
  // an event, top-level key or value longer than `max_value_bytes`. `progress` (optional) gets
  // (file bytes consumed, file size) after every chunk. A smaller `chunk_bytes` lets a test or
  // fuzzer put chunk boundaries anywhere in a small file.
  static Result scan(const std::filesystem::path& path, Handler& handler,
                     const ProgressCallback& progress = {},
                     std::size_t chunk_bytes = kDefaultChunkBytes,
                     std::size_t max_value_bytes = kMaxValueBytes);
};

}  // namespace candle_graph::import::trace_event
