// Children lists of the span hierarchy, built once, so every roll-up over the tree is linear
// (the original rescanned all nodes per node).
#pragma once

#include <cstdint>
#include <vector>

#include "candle_graph/trace.hpp"

namespace candle_graph::graph {

struct SpanTree {
  // children of span i: children[offsets[i] .. offsets[i + 1]) in span order (CSR layout).
  std::vector<std::uint32_t> offsets;
  std::vector<std::uint32_t> children;
  // Every span reachable from a root, parents before children. Reverse it for bottom-up passes.
  std::vector<std::uint32_t> preorder;
};

SpanTree build_span_tree(const TraceDocument& doc);

// Spans reachable from `starts` through child links (each once), in the order reached.
std::vector<std::uint32_t> descendants_of(const SpanTree& tree, const std::vector<std::uint32_t>& starts,
                                          std::size_t span_count);

}  // namespace candle_graph::graph
