// The execution graph candle-graph/graph/3 (docs/format/trace6.md §8): one node per span and op
// with self and total time, call and data edges, the graph summary and the memory profile.
//
// Lifetime: an ExecutionGraph holds string views into the TraceDocument it was built from (span
// ids, names, devices…), so the document must outlive it. This keeps a graph of a million op nodes
// compact (op node ids like `s3/op/0` are formatted only on output).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "candle_graph/health.hpp"
#include "candle_graph/memory.hpp"
#include "candle_graph/trace_document.hpp"

namespace candle_graph {

inline constexpr std::string_view kGraphSchema = "candle-graph/graph/3";

enum class GraphNodeKind : std::uint8_t { root, function, module, op, other };
enum class GraphEdgeKind : std::uint8_t { call, data };
std::string_view to_string(GraphNodeKind v) noexcept;
std::string_view to_string(GraphEdgeKind v) noexcept;

// A node or tensor id as written: `base`, or `base/op/{op_ordinal}` for op nodes.
struct NodeId {
  std::string_view base;
  std::uint32_t op_ordinal = kNoIndex;  // kNoIndex: plain id
  bool is_op() const noexcept { return op_ordinal != kNoIndex; }
  std::string str() const;
  void append_to(std::string& out) const;
  // What follows `base` in the formatted id: `/op/{n}` for an op node (written into `buf`), or
  // nothing.
  std::string_view suffix(char (&buf)[32]) const noexcept;
  // Writes the formatted id to `out` when it fits in `capacity` bytes; returns its size, or 0
  // when it does not fit (nothing is written then).
  std::size_t format_to(char* out, std::size_t capacity) const noexcept;
  // Byte-wise order of the formatted ids, without formatting them on the heap.
  friend int compare_ids(const NodeId& a, const NodeId& b) noexcept;
  friend bool operator==(const NodeId& a, const NodeId& b) noexcept {
    return compare_ids(a, b) == 0;
  }
};

// Spans come first (node i is doc.spans[i]), then one node per op in document op order.
struct GraphNode {
  std::uint32_t span = kNoIndex;        // the span, or the op's owning span
  std::uint32_t op = kNoIndex;          // index into doc.ops for op nodes
  std::uint32_t op_ordinal = kNoIndex;  // n of `{span_id}/op/{n}`
  // Op nodes: the node of the op that encloses this one on its host thread (trace6.md §4.5.1),
  // or kNoIndex. graph/3's parent_id stays the owning span.
  std::uint32_t parent_op = kNoIndex;
  GraphNodeKind kind = GraphNodeKind::function;
  std::uint64_t start_ns = 0;
  std::uint64_t self_time_ns = 0;
  std::uint64_t total_time_ns = 0;
  std::uint64_t bytes = 0;
  std::uint64_t peak_bytes = 0;
  // residual_bytes is never computed in graph/3 (always 0); storage_bytes is present exactly
  // on op nodes (the op's resolved storage bytes).
  bool is_op_node() const noexcept { return op != kNoIndex; }
};

// Where an edge came from (trace6.md §8.2 step 7); its endpoints are derived from the document.
enum class EdgeOrigin : std::uint8_t { explicit_edge, parent_call, data, op_call };
struct GraphEdge {
  EdgeOrigin origin = EdgeOrigin::explicit_edge;
  std::uint32_t index = 0;  // doc.edges index / child node index / op index
  std::uint32_t input = 0;  // data edges: index into the op's inputs
};

struct GraphEdgeView {
  NodeId from;
  NodeId to;
  GraphEdgeKind kind = GraphEdgeKind::call;
  std::uint64_t duration_ns = 0;
  std::optional<std::string_view> label;
};

struct GraphSummary {
  std::string_view entrypoint;
  double total_ms = 0;
  std::vector<std::uint32_t> slowest_spans;   // node indices, ≤ 8
  std::vector<std::uint32_t> heaviest_spans;  // node indices, ≤ 8
  // `memory` is ExecutionGraph::memory.summary
};

struct GraphOptions {
  // The `summary` command needs neither edges nor the edge sort, nor the memory timeline;
  // everything else does.
  bool edges = true;
  bool memory_timeline = true;
  // Threads the packet's analyses may use (health's independent checks); results are the same.
  unsigned threads = 1;
};

class ExecutionGraph {
 public:
  const TraceDocument* doc = nullptr;
  std::vector<GraphNode> nodes;
  std::vector<GraphEdge> edges;  // sorted by (from, to, kind)
  GraphSummary summary;
  MemoryProfile memory;
  // `tensors` and `gradients` are doc.tensors / doc.gradients (one record per event).

  NodeId node_id(std::uint32_t node) const;
  std::optional<std::string_view> parent_id(std::uint32_t node) const;
  std::string_view name(std::uint32_t node) const;
  GraphEdgeView edge(std::uint32_t edge) const { return edge_of(edges[edge]); }
  GraphEdgeView edge_of(const GraphEdge& edge) const;
  // trace6.md §8.1 helper: the first node with this id, or kNoIndex. Linear; for tests and tools.
  std::uint32_t find_node(std::string_view id) const;
};

// trace6.md §8.2. Throws Error("trace is structurally untrusted: …") when health has errors.
ExecutionGraph build_from_trace(const TraceDocument& doc, const GraphOptions& options = {});
// Same, reusing a health report already computed for `doc`.
ExecutionGraph build_from_trace(const TraceDocument& doc, const TraceHealth& health,
                                const GraphOptions& options = {});

// Span indices of the measured region and all its descendants (trace6.md §8.2 step 9, §9.2 step 3),
// in span order. Linear.
std::vector<std::uint32_t> measured_subtree(const TraceDocument& doc);

}  // namespace candle_graph
