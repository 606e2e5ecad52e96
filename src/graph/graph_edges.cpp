#include "graph/graph_edges.hpp"

#include <algorithm>

namespace candle_graph::graph {

void build_edges(ExecutionGraph& graph) {
  const TraceDocument& doc = *graph.doc;
  auto& edges = graph.edges;
  edges.clear();
  // Candidates in the original's insertion order: (a) explicit edges, (b) parent → span calls,
  // (c) per op with an output: data edges input → output, then the span → op call.
  for (std::uint32_t i = 0; i < doc.edges.size(); ++i)
    edges.push_back({EdgeOrigin::explicit_edge, i, 0});
  for (std::uint32_t i = 0; i < doc.spans.size(); ++i) {
    const GraphNode& n = graph.nodes[i];
    if (n.kind != GraphNodeKind::op && doc.spans[i].parent_id)
      edges.push_back({EdgeOrigin::parent_call, i, 0});
  }
  for (std::uint32_t k = 0; k < doc.ops.size(); ++k) {
    const OpEvent& op = doc.ops[k];
    if (!op.output) continue;  // ops without an output get no edges at all
    for (std::uint32_t j = 0; j < op.inputs.size(); ++j) edges.push_back({EdgeOrigin::data, k, j});
    edges.push_back({EdgeOrigin::op_call, k, 0});
  }

  // The original skips a derived edge when an equal (from, to, kind) edge already exists and
  // keeps every explicit edge. A stable sort puts equal keys together in insertion order, so
  // "already exists" becomes "is not the first of its run" — linear after the sort instead of
  // the original's scan per insertion.
  auto cmp = [&](const GraphEdge& x, const GraphEdge& y) {
    const GraphEdgeView a = graph.edge_of(x), b = graph.edge_of(y);
    if (int c = compare(a.from, b.from)) return c < 0;
    if (int c = compare(a.to, b.to)) return c < 0;
    return a.kind < b.kind;
  };
  std::stable_sort(edges.begin(), edges.end(), cmp);
  std::size_t out = 0;
  for (std::size_t i = 0; i < edges.size();) {
    std::size_t j = i + 1;
    while (j < edges.size() && !cmp(edges[i], edges[j])) ++j;  // run of equal keys [i, j)
    bool has_explicit = false;
    for (std::size_t k = i; k < j; ++k) {
      if (edges[k].origin == EdgeOrigin::explicit_edge) {
        edges[out++] = edges[k];
        has_explicit = true;
      }
    }
    if (!has_explicit) edges[out++] = edges[i];  // the first derived edge of the run wins
    i = j;
  }
  edges.resize(out);
}

}  // namespace candle_graph::graph
