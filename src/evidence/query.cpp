// trace6.md §11 `query --kind …`: bounded slices of the packet, keys sorted at every level (§17.1).
#include <algorithm>

#include "device/kernel_table.hpp"
#include "evidence/evidence_json.hpp"
#include "evidence/gpu_trace_json.hpp"
#include "evidence/op_table.hpp"
#include "evidence/step_stats.hpp"
#include "evidence/table_rows_json.hpp"
#include "graph/graph_json.hpp"
#include "memory/memory_json.hpp"

namespace candle_graph::evidence {

using output::JsonStream;
using output::KeyOrder;

namespace {

constexpr std::pair<std::string_view, QueryKind> kKinds[] = {{"slowest", QueryKind::slowest},
                                                             {"heaviest", QueryKind::heaviest},
                                                             {"memory", QueryKind::memory},
                                                             {"efficiency", QueryKind::efficiency},
                                                             {"spans", QueryKind::spans},
                                                             {"tensors", QueryKind::tensors},
                                                             {"gradients", QueryKind::gradients},
                                                             {"ops", QueryKind::ops},
                                                             {"kernels", QueryKind::kernels},
                                                             {"steps", QueryKind::steps},
                                                             {"gpu", QueryKind::gpu}};

// Op-kind nodes (op nodes and spans of kind op) ordered by `key` descending, ties by id
// ascending, the first `limit`. n·log(limit).
template <typename Key>
std::vector<std::uint32_t> top_ops(const ExecutionGraph& g, Key key, std::size_t limit,
                                   bool (*keep)(const GraphNode&)) {
  std::vector<std::uint32_t> ids;
  for (std::uint32_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].kind == GraphNodeKind::op && keep(g.nodes[i])) ids.push_back(i);
  auto before = [&](std::uint32_t a, std::uint32_t b) {
    const auto ka = key(g.nodes[a]), kb = key(g.nodes[b]);
    if (ka != kb) return ka > kb;
    return compare_ids(g.node_id(a), g.node_id(b)) < 0;
  };
  const std::size_t k = std::min(limit, ids.size());
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(k), ids.end(), before);
  ids.resize(k);
  return ids;
}

void write_nodes(JsonStream& w, const ExecutionGraph& g, const std::vector<std::uint32_t>& ids) {
  w.begin_array();
  for (std::uint32_t i : ids) graph::write_graph_node(w, g, i, KeyOrder::sorted);
  w.end_array();
}

bool any_node(const GraphNode&) {
  return true;
}
bool has_rate(const GraphNode& n) {
  return n.self_time_ns > 0 && n.bytes > 0;
}

void write_ops(JsonStream& w, const EvidencePacket& p, std::size_t limit) {
  const OpTable t = op_table(p.graph, p.device);
  w.key("device_ns").u64(t.device_ns);
  w.key("entrypoint").string(p.graph.summary.entrypoint);
  w.key("items").begin_array();
  for (std::size_t i = 0; i < t.rows.size() && i < limit; ++i) write_op_row(w, t.rows[i]);
  w.end_array();
  w.key("kind").string("ops");
  w.key("schema").string(kQuerySchema);
  w.key("total_items").u64(t.rows.size());
  w.key("unattributed_device_ns").u64(t.unattributed_device_ns);
}

void write_kernels(JsonStream& w, const EvidencePacket& p, std::size_t limit) {
  const std::vector<device::KernelRow> rows = device::kernel_table(*p.doc);
  w.key("entrypoint").string(p.graph.summary.entrypoint);
  w.key("items").begin_array();
  for (std::size_t i = 0; i < rows.size() && i < limit; ++i) write_kernel_row(w, rows[i]);
  w.end_array();
  w.key("kind").string("kernels");
  w.key("schema").string(kQuerySchema);
  w.key("total_items").u64(rows.size());
}

void write_steps(JsonStream& w, const EvidencePacket& p) {
  const TraceRunMeta& run = p.doc->run();
  const StepStats s = step_stats(run);
  w.key("chosen");
  if (run.profiler_steps.empty())
    w.null();
  else
    w.u64(run.capture_step);
  w.key("entrypoint").string(p.graph.summary.entrypoint);
  w.key("kind").string("steps");
  w.key("schema").string(kQuerySchema);
  w.key("statistics").begin_object();
  w.key("chosen_typical").boolean(s.chosen_typical);
  w.key("chosen_vs_median_percent");
  if (s.chosen_vs_median_percent)
    w.f64(*s.chosen_vs_median_percent);
  else
    w.null();
  w.key("count").u64(s.count);
  w.key("left_out_step");
  if (s.left_out_step)
    w.u64(*s.left_out_step);
  else
    w.null();
  w.key("max_wall_ns").u64(s.max_wall_ns);
  w.key("median_device_busy_ns").u64(s.median_device_busy_ns);
  w.key("median_wall_ns").u64(s.median_wall_ns);
  w.key("min_wall_ns").u64(s.min_wall_ns);
  w.key("spread_ns").u64(s.spread_ns);
  w.key("typical_within_percent").f64(kTypicalPercent);
  w.end_object();
  w.key("steps").begin_array();
  for (const ProfilerStepRecord& r : run.profiler_steps) {
    w.begin_object();
    w.key("device_busy_ns").u64(r.device_busy_ns);
    w.key("step").u64(r.step);
    w.key("wall_ns").u64(r.wall_ns);
    w.end_object();
  }
  w.end_array();
}

void write_result(JsonStream& w, const EvidencePacket& p, QueryKind kind, std::size_t limit) {
  const ExecutionGraph& g = p.graph;
  const KeyOrder order = KeyOrder::sorted;
  // Keys are written in alphabetical order by hand: every query result carries entrypoint,
  // kind and schema next to its own members.
  w.begin_object();
  switch (kind) {
    case QueryKind::slowest:
      w.key("entrypoint").string(g.summary.entrypoint);
      w.key("kind").string("slowest");
      w.key("schema").string(kQuerySchema);
      write_nodes(w.key("slowest_ops"), g,
                  top_ops(
                      g, [](const GraphNode& n) { return n.self_time_ns; }, limit, any_node));
      graph::write_span_costs(w.key("slowest_spans"), g, g.summary.slowest_spans, false, order);
      w.key("total_ms").f64(g.summary.total_ms);
      break;
    case QueryKind::heaviest:
      w.key("entrypoint").string(g.summary.entrypoint);
      write_nodes(w.key("heaviest_ops"), g,
                  top_ops(
                      g, [](const GraphNode& n) { return n.bytes; }, limit, any_node));
      graph::write_span_costs(w.key("heaviest_spans"), g, g.summary.heaviest_spans, true, order);
      w.key("kind").string("heaviest");
      w.key("peak_bytes").u64(g.memory.summary.peak_bytes);
      w.key("schema").string(kQuerySchema);
      break;
    case QueryKind::memory:
      memory::write_by_device(w.key("by_device"), g.memory.by_device, order);
      w.key("entrypoint").string(g.summary.entrypoint);
      w.key("kind").string("memory");
      memory::write_peak_breakdown(w.key("peak_breakdown"), g.memory.peak_breakdown, order);
      w.key("schema").string(kQuerySchema);
      memory::write_memory_summary(w.key("summary"), g.memory.summary, order);
      memory::write_timeline(w.key("timeline"), g.memory.timeline, order);
      break;
    case QueryKind::efficiency:
      w.key("entrypoint").string(g.summary.entrypoint);
      w.key("kind").string("efficiency");
      w.key("note").string(
          "bytes per nanosecond of self time — higher means more memory traffic per unit "
          "compute");
      write_nodes(w.key("ops"), g,
                  top_ops(
                      g,
                      [](const GraphNode& n) {
                        return static_cast<double>(n.bytes) / static_cast<double>(n.self_time_ns);
                      },
                      limit, has_rate));
      w.key("schema").string(kQuerySchema);
      break;
    case QueryKind::spans:
      graph::write_graph_edges(w.key("edges"), g, order);
      w.key("entrypoint").string(g.summary.entrypoint);
      w.key("kind").string("spans");
      w.key("schema").string(kQuerySchema);
      graph::write_graph_nodes(w.key("spans"), g, order);
      break;
    case QueryKind::tensors:
      w.key("entrypoint").string(g.summary.entrypoint);
      w.key("kind").string("tensors");
      w.key("schema").string(kQuerySchema);
      graph::write_tensor_records(w.key("tensors"), *p.doc, order);
      break;
    case QueryKind::gradients:
      w.key("entrypoint").string(g.summary.entrypoint);
      graph::write_gradient_records(w.key("gradients"), *p.doc, order);
      w.key("kind").string("gradients");
      w.key("schema").string(kQuerySchema);
      break;
    case QueryKind::ops:
      write_ops(w, p, limit);
      break;
    case QueryKind::kernels:
      write_kernels(w, p, limit);
      break;
    case QueryKind::steps:
      write_steps(w, p);
      break;
    case QueryKind::gpu:
      w.key("devices");
      write_gpu_devices(w, p.gpu_trace);
      w.key("entrypoint").string(p.graph.summary.entrypoint);
      w.key("kind").string("gpu");
      w.key("schema").string(kQuerySchema);
      break;
  }
  w.end_object();
}

}  // namespace

std::optional<QueryKind> parse_query_kind(std::string_view s) {
  for (const auto& [name, kind] : kKinds)
    if (name == s) return kind;
  return std::nullopt;
}

std::string_view to_string(QueryKind k) {
  for (const auto& [name, kind] : kKinds)
    if (kind == k) return name;
  return "";
}

void write_query_document(JsonStream& w, const EvidencePacket& p, QueryKind kind,
                          std::size_t limit) {
  w.begin_object();
  w.key("gaps").begin_array();
  for (const std::string& gap : p.gaps) w.string(gap);
  w.end_array();
  write_health(w.key("health"), p.health, KeyOrder::sorted);
  write_result(w.key("result"), p, kind, limit);
  w.end_object();
}

}  // namespace candle_graph::evidence
