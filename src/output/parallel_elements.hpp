// The elements of a large array (a graph's nodes and edges, the memory timeline: most of the
// hundreds of MB of an evidence packet) formatted on several threads. Batches of consecutive
// elements are each written into a fragment of the stream (JsonStream::fragment) and appended
// in order, so the text is byte for byte what one thread writes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>

#include "output/json_stream.hpp"

namespace candle_graph::output {

// Writes elements [begin, end) of the array into the given stream.
using ElementRangeWriter = std::function<void(JsonStream&, std::size_t begin, std::size_t end)>;

// How elements are cut into batches: `first` elements in the first one; then, with `target_bytes`,
// as many as make about that much text at the bytes per element of the last batch formatted
// (without, `first` each).
struct ElementBatches {
  std::size_t first = 1;
  std::size_t target_bytes = 0;
};

// 1024 elements first (about half a MB of pretty text for graph nodes), then about 512 KiB each:
// the writing thread takes each batch as one piece, so it is not woken for every small batch,
// and the text waiting in memory stays a few MB (docs/performance.md, "Analysis commands").
// Tests fix it to a few elements (CANDLE_GRAPH_TEST_JSON_BATCH) so that batches meet everywhere
// in small inputs.
ElementBatches element_batches();

// Writes `count` elements of the array `w` has open, in batches formatted on w.format_threads()
// threads (the calling one included); at most one batch per thread and one more are taken past
// the last one appended. What a batch's writer throws is thrown here, once every thread has
// stopped.
void write_batches_in_parallel(JsonStream& w, std::size_t count, const ElementBatches& batches,
                               const ElementRangeWriter& write_range);

// Writes `count` elements of the array `w` has open, `write_one(stream, i)` each, on several
// threads when the stream allows it and there are at least two first batches of them;
// `write_one` must only read shared data.
// The stream's count_elements hears of them as they are written, a batch at a time.
template <typename WriteOne>
void write_elements(JsonStream& w, std::size_t count, WriteOne&& write_one) {
  const ElementBatches batches = element_batches();
  if (w.format_threads() <= 1 || count < 2 * batches.first) {
    constexpr std::size_t kCountEvery = 4096;
    for (std::size_t begin = 0; begin < count; begin += kCountEvery) {
      const std::size_t end = std::min(count, begin + kCountEvery);
      for (std::size_t i = begin; i < end; ++i) write_one(w, i);
      w.count_elements(end - begin);
    }
    return;
  }
  write_batches_in_parallel(w, count, batches,
                            [&write_one](JsonStream& out, std::size_t begin, std::size_t end) {
                              for (std::size_t i = begin; i < end; ++i) write_one(out, i);
                            });
}

}  // namespace candle_graph::output
