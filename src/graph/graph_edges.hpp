// trace6.md §8.2 step 7: call and data edges, de-duplicated and sorted by (from, to, kind).
#pragma once

#include "candle_graph/graph.hpp"

namespace candle_graph::graph {

// Fills graph.edges; needs graph.nodes (with total times) and graph.doc. n·log n.
void build_edges(ExecutionGraph& graph);

}  // namespace candle_graph::graph
