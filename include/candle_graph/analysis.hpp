// The analyses users read (spec §7–§9.4): the memory profile, the execution graph graph/3 and
// the baseline comparison comparison/1.
//
// Lifetime: MemoryProfile and ExecutionGraph hold string views into the TraceDocument they were
// built from (span ids, names, devices…), so the document must outlive them. This keeps a graph of
// a million op nodes compact (op node ids like `s3/op/0` are formatted only on output).
// Comparison owns its strings and outlives both documents.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "candle_graph/health.hpp"
#include "candle_graph/trace.hpp"

namespace candle_graph {

// ---- §7.1 memory profile ---------------------------------------------------------------------

// A `by_category` map: live bytes per category, keyed by the lowercase category name. Only the
// categories a device ever allocated are present (a map entry is created on first use).
class CategoryBytes {
 public:
  void add(MemoryCategory c, std::uint64_t bytes) noexcept;
  void subtract(MemoryCategory c, std::uint64_t bytes) noexcept;  // saturating, creates the key
  bool has(MemoryCategory c) const noexcept { return (present_ >> index(c)) & 1u; }
  std::uint64_t get(MemoryCategory c) const noexcept { return bytes_[index(c)]; }
  bool empty() const noexcept { return present_ == 0; }
  // The present categories in JSON key order (alphabetical: activation, gradient, optimizer,
  // other, parameter).
  std::vector<MemoryCategory> keys() const;
  bool operator==(const CategoryBytes&) const = default;

 private:
  static unsigned index(MemoryCategory c) noexcept { return static_cast<unsigned>(c); }
  std::array<std::uint64_t, 5> bytes_{};
  std::uint8_t present_ = 0;
};

struct MemorySummary {
  std::uint64_t alloc_count = 0;
  std::uint64_t free_count = 0;
  std::uint64_t total_alloc_bytes = 0;
  std::uint64_t peak_bytes = 0;
  std::uint64_t peak_timestamp_ns = 0;
  std::string_view peak_device;  // empty when there is no memory event
  // The span of the allocation that set the peak (not written to JSON: the report names it).
  std::string_view peak_span_id;
  CategoryBytes peak_by_category;
  std::uint64_t autograd_retained_bytes = 0;
};

struct MemoryTimelinePoint {
  std::uint64_t timestamp_ns = 0;
  std::string_view device;
  std::uint64_t live_bytes = 0;  // also written as heap_bytes
  std::uint64_t free_bytes = 0;  // capacity − live when the capacity is known, else 0
  CategoryBytes by_category;
};

struct LiveAllocation {
  std::string_view tensor_id;
  std::string_view span_id;
  std::optional<std::string_view> op_name;  // written as null when absent
  std::uint64_t bytes = 0;
  std::span<const std::uint64_t> shape;
  std::string_view dtype;
  std::string_view device;
  MemoryCategory category = MemoryCategory::other;
};

struct DeviceMemoryStats {
  std::string_view device;
  std::uint64_t capacity_bytes = 0;
  std::uint64_t peak_bytes = 0;
  std::uint64_t peak_timestamp_ns = 0;
  std::uint64_t alloc_count = 0;
  std::uint64_t free_count = 0;
};

struct MemoryProfile {
  MemorySummary summary;
  std::vector<MemoryTimelinePoint> timeline;   // one point per memory event, in sorted order
  std::vector<LiveAllocation> peak_breakdown;  // live at the global peak, bytes desc, tensor_id
  std::vector<DeviceMemoryStats> by_device;    // sorted by device name
};

// §7.1. Only `doc.memory` drives lifetimes; n·log n (one sort of the events). Without
// `timeline` the timeline stays empty (everything else is the same): callers that only read
// the summary skip ~88 bytes per memory event.
MemoryProfile analyze_memory(const TraceDocument& doc, bool timeline = true);
// The same without storing the timeline: each point is handed to `sink` in replay order (the
// Chrome export streams them as counter samples, with no memory per event). The peak breakdown
// stays empty (it needs memory per event); everything else is the same.
using MemoryPointSink = void (*)(const MemoryTimelinePoint& point, void* user);
MemoryProfile analyze_memory(const TraceDocument& doc, MemoryPointSink sink, void* user);

// ---- §8 execution graph graph/3 --------------------------------------------------------------

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
  friend int compare(const NodeId& a, const NodeId& b) noexcept;
  friend bool operator==(const NodeId& a, const NodeId& b) noexcept { return compare(a, b) == 0; }
};

// Spans come first (node i is doc.spans[i]), then one node per op in document op order.
struct GraphNode {
  std::uint32_t span = kNoIndex;        // the span, or the op's owning span
  std::uint32_t op = kNoIndex;          // index into doc.ops for op nodes
  std::uint32_t op_ordinal = kNoIndex;  // n of `{span_id}/op/{n}`
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

// Where an edge came from (§8.2 step 7); its endpoints are derived from the document.
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
  // §8.1 helper: the first node with this id, or kNoIndex. Linear; for tests and tools.
  std::uint32_t find_node(std::string_view id) const;
};

// §8.2. Throws Error("trace is structurally untrusted: …") when health has errors.
ExecutionGraph build_from_trace(const TraceDocument& doc, const GraphOptions& options = {});
// Same, reusing a health report already computed for `doc`.
ExecutionGraph build_from_trace(const TraceDocument& doc, const TraceHealth& health,
                                const GraphOptions& options = {});

// Span indices of the measured region and all its descendants (§8.2 step 9, §9.2 step 3), in
// span order. Linear.
std::vector<std::uint32_t> measured_subtree(const TraceDocument& doc);

// ---- §9.4 comparison comparison/1 -------------------------------------------------------------

inline constexpr std::string_view kComparisonSchema = "candle-graph/comparison/1";

struct SpanComparison {
  std::string name;  // the key `{root path} [{kind}]/{Step}`
  std::uint64_t baseline_count = 0;
  std::uint64_t candidate_count = 0;
  std::uint64_t baseline_total_ns = 0;
  std::uint64_t candidate_total_ns = 0;
  std::uint64_t baseline_mean_ns = 0;
  std::uint64_t candidate_mean_ns = 0;
  std::int64_t delta_ns = 0;
  std::optional<double> delta_percent;
};

struct GradientComparison {
  std::string parameter;  // `{root}/{key}`
  std::optional<GradientState> baseline_state;
  std::optional<GradientState> candidate_state;
  std::optional<double> baseline_norm;
  std::optional<double> candidate_norm;
  std::optional<double> norm_delta;
};

struct Comparison {
  std::string baseline_run_id;
  std::string candidate_run_id;
  bool comparable = true;
  std::vector<std::string> warnings;
  std::int64_t total_delta_ns = 0;
  std::optional<double> total_delta_percent;
  std::uint64_t baseline_peak_bytes = 0;
  std::uint64_t candidate_peak_bytes = 0;
  std::int64_t peak_delta_bytes = 0;
  std::vector<SpanComparison> spans;          // ≤ 50, largest |delta_ns| first
  std::vector<GradientComparison> gradients;  // ≤ 100, by parameter
};

// §9.4 + §17.6. Works on untrusted documents (then comparable = false, no warning text).
Comparison compare_documents(const TraceDocument& baseline, const TraceDocument& candidate);

}  // namespace candle_graph
