// trace6.md §8.1 graph/3 as JSON, streamed node by node (no DOM of the node/edge arrays).
#pragma once

#include "candle_graph/graph.hpp"
#include "output/json_stream.hpp"

namespace candle_graph::graph {

void write_node_id(output::JsonStream& w, const NodeId& id);
void write_graph_node(output::JsonStream& w, const ExecutionGraph& g, std::uint32_t node,
                      output::KeyOrder order);
void write_graph_edge(output::JsonStream& w, const GraphEdgeView& e, output::KeyOrder order);
void write_tensor_record(output::JsonStream& w, const TensorEvent& t, output::KeyOrder order);
void write_gradient_record(output::JsonStream& w, const GradientEvent& g, output::KeyOrder order);

// Arrays of the above.
void write_graph_nodes(output::JsonStream& w, const ExecutionGraph& g, output::KeyOrder order);
void write_graph_edges(output::JsonStream& w, const ExecutionGraph& g, output::KeyOrder order);
void write_tensor_records(output::JsonStream& w, const TraceDocument& doc, output::KeyOrder order);
void write_gradient_records(output::JsonStream& w, const TraceDocument& doc,
                            output::KeyOrder order);
void write_span_costs(output::JsonStream& w, const ExecutionGraph& g,
                      const std::vector<std::uint32_t>& nodes, bool heaviest,
                      output::KeyOrder order);

void write_graph_summary(output::JsonStream& w, const ExecutionGraph& g, output::KeyOrder order);
void write_graph(output::JsonStream& w, const ExecutionGraph& g, output::KeyOrder order);

}  // namespace candle_graph::graph
