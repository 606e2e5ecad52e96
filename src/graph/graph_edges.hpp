// trace6.md §8.2 step 7: call and data edges, de-duplicated and sorted by (from, to, kind).
#pragma once

#include "candle_graph/graph.hpp"

namespace candle_graph {
class PagePrefaulter;
}

namespace candle_graph::graph {

// Fills graph.edges; needs graph.nodes (with total times) and graph.doc. n·log n. With a
// prefaulter (another thread), the arrays it fills next are mapped beside the filling of the
// ones before.
void build_edges(ExecutionGraph& graph, PagePrefaulter* prefaulter = nullptr);

}  // namespace candle_graph::graph
