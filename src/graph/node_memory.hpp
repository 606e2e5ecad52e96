// trace6.md §7.2 node memory metrics for span nodes. (Op nodes need none: their bytes and peak are
// their storage bytes, which the graph sets directly.)
#pragma once

#include <cstdint>
#include <vector>

#include "candle_graph/graph.hpp"
#include "graph/span_tree.hpp"

namespace candle_graph::graph {

struct SpanMemory {
  std::vector<std::uint64_t> bytes;  // Σ storage bytes of the span's own ops
  std::vector<std::uint64_t> peak;   // rolled up over the span subtree
};

// Fix of trace6.md §7.2 step 2: every span that made a peak allocation gets its bytes as a peak,
// not only spans that own a byte-carrying op. Linear.
SpanMemory node_memory_metrics(const TraceDocument& doc, const MemoryProfile& memory,
                               const SpanTree& tree);

}  // namespace candle_graph::graph
