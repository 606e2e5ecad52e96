// trace6.md §8.2 build_from_trace: span and op nodes, effective durations, TF-profiler self times,
// node memory, edges and the summary. Every pass is linear over the children lists of SpanTree (the
// original was quadratic); only the edge sort is n·log n.
#include "graph/graph_builder.hpp"

#include <algorithm>
#include <optional>

#include "events/saturating.hpp"
#include "graph/graph_edges.hpp"
#include "graph/node_memory.hpp"
#include "graph/span_tree.hpp"
#include "trace/host_nesting.hpp"
#include "trace/huge_pages.hpp"
#include "trace/page_prefaulter.hpp"

namespace candle_graph {
namespace {

GraphNodeKind node_kind(const SpanRecord& s) noexcept {
  if (!s.parent_id) return GraphNodeKind::root;
  switch (s.kind) {
    case SpanKind::function:
      return GraphNodeKind::function;
    case SpanKind::module:
      return GraphNodeKind::module;
    case SpanKind::op:
      return GraphNodeKind::op;  // a span of kind op becomes an op node
  }
  return GraphNodeKind::other;
}

// trace6.md §8.2 step 9: first `limit` of `candidates` ordered by `key` descending, ties in node
// order.
template <typename Key>
std::vector<std::uint32_t> top_spans(std::vector<std::uint32_t> candidates, Key key,
                                     std::size_t limit) {
  auto before = [&](std::uint32_t a, std::uint32_t b) {
    const std::uint64_t ka = key(a), kb = key(b);
    return ka != kb ? ka > kb : a < b;
  };
  const std::size_t k = std::min(limit, candidates.size());
  std::partial_sort(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(k),
                    candidates.end(), before);
  candidates.resize(k);
  return candidates;
}

}  // namespace

std::vector<std::uint32_t> measured_subtree(const TraceDocument& doc) {
  doc.check_indexed();
  const graph::SpanTree tree = graph::build_span_tree(doc);
  std::vector<std::uint32_t> measured;
  for (std::uint32_t i = 0; i < doc.spans().size(); ++i)
    if (doc.spans()[i].measured) measured.push_back(i);
  std::vector<std::uint32_t> out =
      graph::descendants_of(tree, std::move(measured), doc.spans().size());
  std::sort(out.begin(), out.end());
  return out;
}

ExecutionGraph build_from_trace(const TraceDocument& doc, const GraphOptions& options) {
  return build_from_trace(doc, analyze_health(doc), options);
}

ExecutionGraph build_from_trace(const TraceDocument& doc, const TraceHealth& health,
                                const GraphOptions& options) {
  // Step 2 (the memory replay) reads the document alone: with threads it runs beside steps 1–4.
  return graph::build_from_trace(doc, health, options, graph::start_memory_replay(doc, options));
}

namespace graph {

std::future<MemoryProfile> start_memory_replay(const TraceDocument& doc,
                                               const GraphOptions& options) {
  if (options.threads <= 1 || (options.edges && options.memory_timeline)) return {};
  return std::async(std::launch::async, [&doc, timeline = options.memory_timeline] {
    return analyze_memory(doc, timeline);
  });
}

// Without a started replay (`memory` not valid) step 2 replays here, after the edges.
ExecutionGraph build_from_trace(const TraceDocument& doc, const TraceHealth& health,
                                const GraphOptions& options, std::future<MemoryProfile> memory) {
  doc.check_indexed();
  // Step 1: analysis never proceeds through an invalid hierarchy.
  if (!health.trusted)
    throw Error(ErrorKind::untrusted, {}, 0,
                "trace is structurally untrusted: " + health.error_summary());

  ExecutionGraph g;
  g.doc = &doc;
  const std::size_t n_spans = doc.spans().size();
  // With threads, when the edges are built (and the memory replay waits until after them), the
  // graph's large arrays are mapped on another thread before this one fills them: their pages'
  // faults (the kernel zeroing each) had this thread to themselves while the other core idled.
  // Not beside the replay: the nodes would then coexist with its tables (+13 MiB for `summary`
  // of 295 MB).
  std::optional<PagePrefaulter> prefaulter;
  if (options.threads > 1 && options.edges && !memory.valid())
    reserve_ahead(g.nodes, n_spans + doc.ops().size(), &prefaulter.emplace());
  const graph::SpanTree tree = graph::build_span_tree(doc);
  const auto& op_span = doc.op_span();

  // Host ops nest by their extents (trace6.md §4.5.1): an op node's total is its inclusive time,
  // its self time the exclusive one. A span's op children are its ops that no op of the same
  // span encloses, so nested time is counted once.
  const HostNesting nesting = nest_host_ops(doc);
  std::vector<std::uint64_t> op_time(n_spans, 0);
  for (std::size_t k = 0; k < doc.ops().size(); ++k) {
    if (op_span[k] == kNoIndex) continue;
    const std::uint32_t p = nesting.parent[k];
    if (p != kNoIndex && op_span[p] == op_span[k]) continue;
    op_time[op_span[k]] = sat_add(op_time[op_span[k]], nesting.total_ns[k]);
  }

  // Step 3: span nodes. Effective duration = duration, or (when 0) own ops + effective
  // durations of the child spans, computed bottom-up.
  assign_in_huge_pages(g.nodes, n_spans + doc.ops().size(), GraphNode{});
  std::vector<std::uint64_t> child_time(n_spans, 0);  // Σ totals of a node's children (step 6)
  for (auto it = tree.preorder.rbegin(); it != tree.preorder.rend(); ++it) {
    const std::uint32_t s = *it;
    std::uint64_t children = op_time[s];
    for (std::uint32_t k = tree.offsets[s]; k < tree.offsets[s + 1]; ++k)
      children = sat_add(children, g.nodes[tree.children[k]].total_time_ns);
    child_time[s] = children;
    const SpanRecord& rec = doc.spans()[s];
    GraphNode& node = g.nodes[s];
    node.span = s;
    node.kind = node_kind(rec);
    node.start_ns = rec.start_ns;
    node.total_time_ns = rec.duration_ns > 0 ? rec.duration_ns : children;
  }

  // Step 4: op nodes, numbered per span in document order.
  std::vector<std::uint32_t> ordinal(n_spans, 0);
  for (std::uint32_t k = 0; k < doc.ops().size(); ++k) {
    const OpEvent& op = doc.ops()[k];
    GraphNode& node = g.nodes[n_spans + k];
    node.span = op_span[k];
    node.op = k;
    node.op_ordinal = ordinal[op_span[k]]++;
    node.kind = GraphNodeKind::op;
    node.start_ns = op.timestamp_ns;
    node.total_time_ns = nesting.total_ns[k];
    node.self_time_ns = nesting.self_ns[k];
    if (nesting.parent[k] != kNoIndex)
      node.parent_op = static_cast<std::uint32_t>(n_spans + nesting.parent[k]);
    node.bytes = node.peak_bytes = op.storage_bytes.value_or(0);
  }

  // Step 7 before step 2 (they are independent): the edge sort's scratch space is the peak of
  // `import`'s memory, and the memory timeline (88 bytes per memory event) does not exist yet.
  if (options.edges) graph::build_edges(g, prefaulter ? &*prefaulter : nullptr);
  prefaulter.reset();
  g.memory =
      memory.valid() ? memory.get() : analyze_memory(doc, options.memory_timeline);  // step 2

  // Step 5: node memory (span nodes start at 0, so "overwrite when > 0" is an assignment).
  const graph::SpanMemory mem = graph::node_memory_metrics(doc, g.memory, tree);
  for (std::uint32_t s = 0; s < n_spans; ++s) {
    g.nodes[s].bytes = mem.bytes[s];
    g.nodes[s].peak_bytes = mem.peak[s];
    // Step 6: TF-profiler self time; children are child spans and op nodes, not grandchildren.
    const std::uint64_t total = g.nodes[s].total_time_ns;
    g.nodes[s].self_time_ns = total > child_time[s] ? total - child_time[s] : 0;
  }

  // Step 9: summary over the measured subtree, spans that are not of kind op.
  g.summary.entrypoint = doc.run().entrypoint;
  std::vector<std::uint32_t> measured;
  for (std::uint32_t i = 0; i < n_spans; ++i)
    if (doc.spans()[i].measured) {
      measured.push_back(i);
      g.summary.total_ms += static_cast<double>(doc.spans()[i].duration_ns) / 1e6;
    }
  std::vector<std::uint32_t> candidates;
  for (std::uint32_t s : graph::descendants_of(tree, std::move(measured), n_spans))
    if (g.nodes[s].kind != GraphNodeKind::op) candidates.push_back(s);
  g.summary.slowest_spans = top_spans(
      candidates, [&](std::uint32_t i) { return g.nodes[i].self_time_ns; }, 8);
  g.summary.heaviest_spans = top_spans(
      std::move(candidates), [&](std::uint32_t i) { return g.nodes[i].bytes; }, 8);
  return g;
}

}  // namespace graph
}  // namespace candle_graph
