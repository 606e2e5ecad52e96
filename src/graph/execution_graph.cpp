// ExecutionGraph accessors: ids, names and edge endpoints are read from the document on demand.
#include "candle_graph/graph.hpp"

namespace candle_graph {

NodeId ExecutionGraph::node_id(std::uint32_t i) const {
  const GraphNode& n = nodes[i];
  if (n.is_op_node()) return {doc->ops()[n.op].span_id, n.op_ordinal};
  return {doc->spans()[n.span].id, kNoIndex};
}

std::optional<std::string_view> ExecutionGraph::parent_id(std::uint32_t i) const {
  const GraphNode& n = nodes[i];
  if (n.is_op_node()) return doc->ops()[n.op].span_id;
  return doc->spans()[n.span].parent_id;
}

std::string_view ExecutionGraph::name(std::uint32_t i) const {
  const GraphNode& n = nodes[i];
  return n.is_op_node() ? doc->ops()[n.op].op_name : doc->spans()[n.span].name;
}

GraphEdgeView ExecutionGraph::edge_of(const GraphEdge& e) const {
  switch (e.origin) {
    case EdgeOrigin::explicit_edge: {
      const EdgeEvent& x = doc->edges()[e.index];
      return {{x.from_span}, {x.to_span}, GraphEdgeKind::call, x.duration_ns, std::nullopt};
    }
    case EdgeOrigin::parent_call: {
      const GraphNode& child = nodes[e.index];
      const SpanRecord& s = doc->spans()[child.span];
      return {{*s.parent_id}, {s.id}, GraphEdgeKind::call, child.total_time_ns, std::nullopt};
    }
    case EdgeOrigin::data: {
      // An op's edges last as long as the op, nested ops included (its node's total).
      const OpEvent& op = doc->ops()[e.index];
      const std::uint64_t total = nodes[doc->spans().size() + e.index].total_time_ns;
      return {{op.inputs[e.input]}, {*op.output}, GraphEdgeKind::data, total, op.op_name};
    }
    case EdgeOrigin::op_call: {
      const OpEvent& op = doc->ops()[e.index];
      const GraphNode& node = nodes[doc->spans().size() + e.index];
      return {{op.span_id},
              {op.span_id, node.op_ordinal},
              GraphEdgeKind::call,
              node.total_time_ns,
              op.op_name};
    }
  }
  return {};
}

std::uint32_t ExecutionGraph::find_node(std::string_view id) const {
  for (std::uint32_t i = 0; i < nodes.size(); ++i)
    if (node_id(i) == NodeId{id, kNoIndex}) return i;
  return kNoIndex;
}

}  // namespace candle_graph
