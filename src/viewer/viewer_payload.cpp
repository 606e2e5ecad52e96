#include "viewer/viewer_payload.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "candle_graph/importer.hpp"
#include "device/device_time.hpp"
#include "device/kernel_table.hpp"
#include "events/saturating.hpp"
#include "evidence/evidence_json.hpp"
#include "evidence/gpu_findings.hpp"
#include "evidence/gpu_trace_json.hpp"
#include "evidence/op_table.hpp"
#include "evidence/table_rows_json.hpp"
#include "memory/memory_json.hpp"
#include "output/json_stream.hpp"

namespace candle_graph::viewer {
namespace {

using output::KeyOrder;

// No string of the page is longer than this: a name of 50 MB was written a dozen times (the
// trace nodes, the tables, the findings), 630 MB of HTML that no browser opens. Real names, the
// longest templated kernel names included, stay far below it.
constexpr std::size_t kPageStringBytes = std::size_t{16} << 10;

// A string over kPageStringBytes: its start, cut at a UTF-8 boundary, then its length and the
// start of its SHA-256, so that ids and the references to them stay equal to each other and
// distinct from every other id however they were cut.
std::string shortened_for_page(std::string_view s) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  EVP_Digest(s.data(), s.size(), digest.data(), &size, EVP_sha256(), nullptr);
  char hex[17] = {};
  for (int i = 0; i < 8; ++i) std::snprintf(hex + 2 * i, 3, "%02x", digest[i]);
  const std::string tail = "… [" + std::to_string(s.size()) + " bytes, sha256 " + hex + "…]";
  std::size_t cut = kPageStringBytes - tail.size();
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut)) + tail;
}

output::JsonStream page_json() {
  output::JsonStream w({}, output::JsonStyle::compact);
  w.shorten_strings_over(kPageStringBytes, &shortened_for_page);
  return w;
}

// Small parts reuse the evidence/memory writers (sorted keys) in the compact style the page
// embeds (trace6.md §12.1).
template <typename F>
std::string sorted_json(F&& write) {
  output::JsonStream w = page_json();
  write(w);
  return w.take();
}

double ms(std::uint64_t ns) {
  return static_cast<double>(ns) / 1e6;
}

std::string_view short_label(std::string_view name) {
  const std::size_t p = name.rfind("::");
  return p == std::string_view::npos ? name : name.substr(p + 2);
}

struct Context {
  const evidence::EvidencePacket& p;
  const ExecutionGraph& g;
  const NodeSelection& sel;
  double max_peak;
};

void write_shape(output::JsonStream& w, std::span<const std::uint64_t> shape) {
  w.begin_array();
  for (std::uint64_t d : shape) w.u64(d);
  w.end_array();
}

// trace6.md §12.1 TraceNode; memory_ratio = node peak ÷ largest node peak (compatibility fix).
void write_trace_node(output::JsonStream& w, const Context& c, std::uint32_t i) {
  const GraphNode& n = c.g.nodes[i];
  const OpEvent* op = n.is_op_node() ? &c.g.doc->ops()[n.op] : nullptr;
  const auto& folded = c.sel.folded[i];
  w.begin_object();
  if (folded.spans || folded.ops) {  // added: descendants folded into this node (bounded payload)
    w.key("aggregated").begin_object();
    w.key("ops").u64(folded.ops).key("self_time_ns").u64(folded.self_time_ns);
    w.key("spans").u64(folded.spans).end_object();
  }
  w.key("bytes").u64(n.bytes);
  w.key("device");
  op ? w.string(op->device) : w.null();
  w.key("dtype");
  op ? w.string(op->dtype) : w.null();
  w.key("id").string(c.g.node_id(i).str());
  w.key("kind").string(to_string(n.kind));
  const std::string_view name = c.g.name(i);
  w.key("label").string(name);
  w.key("memory_ratio").f64(c.max_peak > 0 ? static_cast<double>(n.peak_bytes) / c.max_peak : 0.0);
  w.key("parent_id");
  const auto parent = c.g.parent_id(i);
  parent ? w.string(*parent) : w.null();
  // Added: the op that encloses this one on its host thread (trace6.md §4.5.1), so the timeline
  // draws nested ops inside it; omitted at top level.
  if (n.parent_op != kNoIndex) w.key("parent_op_id").string(c.g.node_id(n.parent_op).str());
  w.key("peak_bytes").u64(n.peak_bytes);
  w.key("residual_bytes").u64(0);
  w.key("self_ratio")
      .f64(n.total_time_ns
               ? static_cast<double>(n.self_time_ns) / static_cast<double>(n.total_time_ns)
               : 0.0);
  w.key("self_time_ms").f64(ms(n.self_time_ns));
  w.key("self_time_ns").u64(n.self_time_ns);
  w.key("shape");
  op && !op->shape.empty() ? write_shape(w, op->shape) : void(w.null());
  w.key("short_label").string(short_label(name));
  w.key("start_ns").u64(n.start_ns);
  w.key("storage_bytes");
  op ? w.u64(op->storage_bytes.value_or(0)) : w.null();
  w.key("total_time_ms").f64(ms(n.total_time_ns));
  w.key("total_time_ns").u64(n.total_time_ns);
  w.end_object();
}

// trace6.md §12.1 TraceEdge: label "{ms:.2} ms" unless the stored label already contains "ms".
void write_trace_edge(output::JsonStream& w, const GraphEdgeView& e) {
  const std::string from = e.from.str(), to = e.to.str();
  w.begin_object();
  w.key("duration_ms").f64(ms(e.duration_ns));
  w.key("duration_ns").u64(e.duration_ns);
  w.key("from").string(from);
  w.key("id").string(from + "->" + to);
  w.key("kind").string(to_string(e.kind));
  if (e.label && e.label->find("ms") != std::string_view::npos) {
    w.key("label").string(*e.label);
  } else {
    char text[64];
    std::snprintf(text, sizeof text, "%.2f ms", ms(e.duration_ns));
    w.key("label").string(text);
  }
  w.key("to").string(to);
  w.end_object();
}

// The node an edge belongs to for the bounded payload (its endpoints may be tensor ids).
std::uint32_t edge_owner(const ExecutionGraph& g, const GraphEdge& e) {
  const auto spans = static_cast<std::uint32_t>(g.doc->spans().size());
  switch (e.origin) {
    case EdgeOrigin::parent_call:
      return e.index;
    case EdgeOrigin::data:
    case EdgeOrigin::op_call:
      return spans + e.index;
    case EdgeOrigin::explicit_edge:
      return kNoIndex;
  }
  return kNoIndex;
}

// The keys a span-cost row and a span-tree row share, which in sorted order come first in both
// (`bytes` … `self_ms`); the object is left open for the row's own keys.
void begin_node_row(output::JsonStream& w, const Context& c, std::uint32_t i) {
  const GraphNode& n = c.g.nodes[i];
  w.begin_object();
  w.key("bytes").u64(n.bytes);
  w.key("id").string(c.g.node_id(i).str());
  w.key("kind").string(to_string(n.kind));
  w.key("name").string(c.g.name(i));
  w.key("parent_id");
  const auto parent = c.g.parent_id(i);
  parent ? w.string(*parent) : w.null();
  w.key("peak_bytes").u64(n.peak_bytes);
  w.key("self_ms").f64(ms(n.self_time_ns));
}

void write_span_cost(output::JsonStream& w, const Context& c, std::uint32_t i) {
  const GraphNode& n = c.g.nodes[i];
  begin_node_row(w, c, i);
  w.key("self_time_ns").u64(n.self_time_ns);
  w.key("start_ns").u64(n.start_ns);
  w.key("storage_bytes");
  n.is_op_node() ? w.u64(c.g.doc->ops()[n.op].storage_bytes.value_or(0)) : w.null();
  w.key("total_ms").f64(ms(n.total_time_ns));
  w.key("total_time_ns").u64(n.total_time_ns);
  w.end_object();
}

void write_tree_row(output::JsonStream& w, const Context& c, std::uint32_t i) {
  const GraphNode& n = c.g.nodes[i];
  begin_node_row(w, c, i);
  w.key("self_ratio")
      .f64(n.total_time_ns
               ? static_cast<double>(n.self_time_ns) / static_cast<double>(n.total_time_ns)
               : 0.0);
  w.key("total_ms").f64(ms(n.total_time_ns));
  w.end_object();
}

// GradientView; state `non_finite` like everywhere else (compatibility fix of `nonfinite`).
// Bounded: the gradients that need attention (state ≠ present) first, then the present ones, in
// trace order within each group, at most `limit`.
std::vector<const GradientEvent*> bounded_gradients(const TraceDocument& doc, std::size_t limit) {
  std::vector<const GradientEvent*> out;
  for (int pass = 0; pass < 2; ++pass)
    for (const GradientEvent& g : doc.gradients())
      if ((g.state != GradientState::present) == (pass == 0) && out.size() < limit)
        out.push_back(&g);
  if (doc.gradients().size() <= limit)  // small: keep the original order of trace6.md §12.1
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = &doc.gradients()[i];
  return out;
}

void write_gradients(output::JsonStream& w, const std::vector<const GradientEvent*>& list) {
  w.begin_array();
  for (const GradientEvent* gp : list) {
    const GradientEvent& g = *gp;
    w.begin_object().key("key").string(g.key).key("norm");
    g.norm ? w.f64(*g.norm) : w.null();
    w.key("root").string(g.root).key("state").string(to_string(g.state)).end_object();
  }
  w.end_array();
}

void write_spans_list(output::JsonStream& w, const ExecutionGraph& g,
                      const std::vector<std::uint32_t>& ids, bool heaviest) {
  w.begin_array();
  for (std::uint32_t i : ids) {
    w.begin_object();
    if (heaviest) w.key("bytes").u64(g.nodes[i].bytes);
    w.key("id").string(g.node_id(i).str()).key("name").string(g.name(i));
    if (heaviest)
      w.key("peak_bytes").u64(g.nodes[i].peak_bytes);
    else
      w.key("self_time_ns").u64(g.nodes[i].self_time_ns);
    w.end_object();
  }
  w.end_array();
}

// Added: the Operators view, PyTorch's key_averages() table (op_table.hpp), bounded to the rows of
// select_op_rows. The sums are over the whole table, not the kept rows, so the shares the viewer
// shows are of all host self time and of all device time, never of what survived the bound.
void write_operators(output::JsonStream& w, const evidence::OpTable& t,
                     const std::vector<std::uint32_t>& kept) {
  std::uint64_t host_self = 0;
  for (const evidence::OpRow& r : t.rows)
    host_self = host_self + r.host_self_ns < host_self ? UINT64_MAX : host_self + r.host_self_ns;
  w.begin_object();
  w.key("device_ns").u64(t.device_ns);
  w.key("host_self_ns").u64(host_self);
  w.key("items").begin_array();
  for (std::uint32_t i : kept) evidence::write_op_row(w, t.rows[i]);
  w.end_array();
  w.key("unattributed_device_ns").u64(t.unattributed_device_ns);
  w.end_object();
}

// Added: the Kernels view, device work per name and device (kernel_table.hpp), the first `limit`
// rows by total time. `device_ns` is all device work (syncs excluded, as in the table), the
// denominator of every row's share.
void write_kernels(output::JsonStream& w, const std::vector<device::KernelRow>& rows,
                   std::uint64_t device_ns, std::size_t limit) {
  w.begin_object();
  w.key("device_ns").u64(device_ns);
  w.key("items").begin_array();
  for (std::size_t i = 0; i < rows.size() && i < limit; ++i) evidence::write_kernel_row(w, rows[i]);
  w.end_array();
  w.end_object();
}

// The measured step's interval in trace time (the first measured span, trace6.md §4.3).
struct Step {
  std::uint64_t begin_ns = 0, ns = 0;
};
Step measured_step(const TraceDocument& doc) {
  for (const SpanRecord& s : doc.spans())
    if (s.measured) return {s.start_ns, s.duration_ns};
  return {};
}

// Added: one device's Overview row (docs/compatibility.md, Viewer): the step split into parts that
// add up exactly, every part derived from the device's gpu_trace numbers.
//   busy   = compute + communication not under compute + memory under neither
//            (the kernel_types segments, which partition busy time);
//   window = busy + idle, idle = host wait + kernel wait + other (the device's own gaps, each
//            by the cause of the work that ended it);
//   total  = window + host only, host only = the part of [step ∪ window] outside the window.
void write_overview_device(output::JsonStream& w, const device::DeviceGpu& d,
                           std::optional<std::string_view> gpu_model, Step step,
                           std::size_t stream_limit) {
  std::uint64_t comm_exposed = 0, memory_exposed = 0;
  for (const device::KernelTypeTime& t : d.kernel_types) {
    const bool compute = t.type.find("COMPUTATION") != std::string::npos;
    if (compute) continue;  // counted in compute_ns, the union of compute work
    if (t.type.find("COMMUNICATION") != std::string::npos)
      comm_exposed = sat_add(comm_exposed, t.ns);
    else
      memory_exposed = sat_add(memory_exposed, t.ns);
  }
  const std::uint64_t idle_host = d.idle_host_wait_ns, idle_kernel = d.idle_kernel_wait_ns,
                      idle_other = d.idle_other_ns;
  const std::uint64_t window_end = d.window_begin_ns + d.window_ns;
  // A device with only waits (sync rows) has no window: its whole step is host only.
  const bool no_window = d.window_ns == 0;
  const std::uint64_t begin =
      no_window ? step.begin_ns : std::min(step.begin_ns, d.window_begin_ns);
  const std::uint64_t end =
      no_window ? step.begin_ns + step.ns : std::max(step.begin_ns + step.ns, window_end);
  const std::uint64_t total = end - begin;

  w.begin_object();
  w.key("busy_ns").u64(d.busy_ns);
  w.key("comm_compute_overlap");
  d.comm_compute_overlap ? w.f64(*d.comm_compute_overlap) : w.null();
  w.key("communication_exposed_ns").u64(comm_exposed);
  w.key("communication_ns").u64(d.communication_ns);
  w.key("compute_ns").u64(d.compute_ns);
  w.key("device").string(d.device);
  w.key("gpu_model");
  gpu_model ? w.string(*gpu_model) : w.null();
  w.key("host_only_ns").u64(total - d.window_ns);
  w.key("idle_host_wait_ns").u64(idle_host);
  w.key("idle_kernel_wait_ns").u64(idle_kernel);
  w.key("idle_ns").u64(d.idle_ns);
  w.key("idle_other_ns").u64(idle_other);
  w.key("launches");
  evidence::write_launch_stats(w, d.launches);
  w.key("memory_exposed_ns").u64(memory_exposed);
  w.key("memory_ns").u64(d.memory_ns);
  w.key("streams").begin_array();
  for (std::size_t i = 0; i < d.streams.size() && i < stream_limit; ++i)
    evidence::write_stream_idle(w, d.streams[i]);
  w.end_array();
  w.key("streams_total").u64(d.streams.size());
  w.key("sync_ns").u64(d.sync_ns);
  w.key("sync_stalls").begin_array();
  for (std::size_t i = 0; i < d.sync_stalls.size() && i < stream_limit; ++i)
    evidence::write_sync_stall(w, d.sync_stalls[i]);
  w.end_array();
  w.key("total_begin_ns").u64(begin);
  w.key("total_ns").u64(total);
  w.key("window_begin_ns").u64(d.window_begin_ns);
  w.key("window_ns").u64(d.window_ns);
  w.end_object();
}

// Added: the Overview view (views.overview), built from the packet's gpu_trace; `devices` is empty
// for a trace without device work, and then the viewer shows no Overview. The findings are the
// packet's own GPU findings (gpu_findings.hpp), in the packet's order and wording.
void write_overview(output::JsonStream& w, const evidence::EvidencePacket& p, std::size_t limit) {
  const TraceDocument& doc = *p.doc;
  const Step step = measured_step(doc);
  const std::vector<std::string> gpu = evidence::gpu_findings(
      p.gpu_trace, doc, static_cast<std::uint64_t>(std::llround(p.graph.summary.total_ms * 1e6)));
  // The importer names the model of the run's own device only (pytorch.md, source.device_name).
  const std::optional<std::string_view> run_gpu_model = gpu_model(doc.run());
  w.begin_object();
  w.key("devices").begin_array();
  for (const device::DeviceGpu& d : p.gpu_trace.devices)
    write_overview_device(w, d, d.device == doc.run().device ? run_gpu_model : std::nullopt, step,
                          limit);
  w.end_array();
  w.key("findings").begin_array();
  for (const std::string& f : p.findings)
    if (std::find(gpu.begin(), gpu.end(), f) != gpu.end()) w.string(f);
  w.end_array();
  w.key("host_sync_ns").u64(p.gpu_trace.host_sync_ns);
  w.key("step_begin_ns").u64(step.begin_ns);
  w.key("step_ns").u64(step.ns);
  w.end_object();
}

// Names longer than this are cut (at a UTF-8 boundary) in the timeline's name list: templated
// kernel names can be kilobytes, and 20,000 distinct ones would make the page huge. The Kernels
// view keeps the whole name.
constexpr std::size_t kLaneNameBytes = 512;
std::string lane_name(std::string_view raw) {
  std::string name = device::demangled(raw);
  if (name.size() <= kLaneNameBytes) return name;
  std::size_t cut = kLaneNameBytes;
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;
  name.resize(cut);
  return name + "…";
}

// Added: device work for the timeline's stream lanes (views.device_work), columnar so that 20,000
// items cost a few hundred kB: per item its lane (index into `lanes`), start and device duration
// in trace time, kind (index into `kinds`; a kernel that is communication by its name, pytorch.md
// §G1, is "communication"), name (index into `names`) and `launch`, the index into
// views.trace.nodes of the runtime call with its correlation (-1 when there is none, or it was
// folded out of the bounded payload).
void write_device_work(output::JsonStream& w, const TraceDocument& doc,
                       const std::vector<std::uint32_t>& items,
                       const std::vector<std::int64_t>& node_position) {
  static constexpr std::string_view kKinds[] = {"communication", "kernel", "memcpy", "memset",
                                                "sync"};
  const auto kind_of = [](const OpEvent& op) -> std::uint64_t {
    switch (op.op_kind) {
      case OpKind::memcpy:
        return 2;
      case OpKind::memset:
        return 3;
      case OpKind::sync:
        return 4;
      default:
        return device::is_communication_kernel(op.op_name) ? 0 : 1;
    }
  };
  std::unordered_map<std::uint64_t, std::uint32_t> call_of;  // correlation → doc.ops() index
  for (std::uint32_t i = 0; i < doc.ops().size(); ++i) {
    const OpEvent& op = doc.ops()[i];
    if (op.op_kind == OpKind::runtime && op.correlation) call_of.try_emplace(*op.correlation, i);
  }
  const auto spans = static_cast<std::uint32_t>(doc.spans().size());
  // Every (device, stream) of the document is a lane, in that order, even one whose work all fell
  // to the cap: the lane and its `total` still say the stream was used.
  std::map<std::pair<std::string_view, std::uint64_t>, std::uint64_t> lane_total;
  for (const OpEvent& op : doc.device_ops()) ++lane_total[{op.device, op.lane.value_or(0)}];
  std::map<std::pair<std::string_view, std::uint64_t>, std::uint32_t> lane_of;
  for (const auto& [key, total] : lane_total) lane_of.emplace(key, lane_of.size());
  // Names in order of first use.
  std::unordered_map<std::string_view, std::uint32_t> name_of;
  std::vector<std::string_view> names;
  std::vector<std::uint32_t> lane_col, name_col;
  lane_col.reserve(items.size());
  name_col.reserve(items.size());
  for (std::uint32_t k : items) {
    const OpEvent& op = doc.device_ops()[k];
    lane_col.push_back(lane_of.at({op.device, op.lane.value_or(0)}));
    const auto [name, new_name] = name_of.try_emplace(op.op_name, names.size());
    if (new_name) names.push_back(op.op_name);
    name_col.push_back(name->second);
  }
  w.begin_object();
  w.key("items").begin_object();
  w.key("duration_ns").begin_array();
  for (std::uint32_t k : items) w.u64(device::device_duration(doc.device_ops()[k]));
  w.end_array();
  w.key("kind").begin_array();
  for (std::uint32_t k : items) w.u64(kind_of(doc.device_ops()[k]));
  w.end_array();
  w.key("lane").begin_array();
  for (std::uint32_t l : lane_col) w.u64(l);
  w.end_array();
  w.key("launch").begin_array();
  for (std::uint32_t k : items) {
    const OpEvent& op = doc.device_ops()[k];
    const auto call = op.correlation ? call_of.find(*op.correlation) : call_of.end();
    w.i64(call == call_of.end() ? -1 : node_position[spans + call->second]);
  }
  w.end_array();
  w.key("name").begin_array();
  for (std::uint32_t n : name_col) w.u64(n);
  w.end_array();
  w.key("start_ns").begin_array();
  for (std::uint32_t k : items) w.u64(doc.device_ops()[k].timestamp_ns);
  w.end_array();
  w.end_object();
  w.key("kinds").begin_array();
  for (std::string_view k : kKinds) w.string(k);
  w.end_array();
  w.key("lanes").begin_array();
  for (const auto& [key, total] : lane_total) {
    w.begin_object().key("device").string(key.first);
    w.key("stream").u64(key.second).key("total").u64(total).end_object();
  }
  w.end_array();
  w.key("names").begin_array();
  for (std::string_view n : names) w.string(lane_name(n));
  w.end_array();
  w.end_object();
}

}  // namespace

std::string project(const evidence::EvidencePacket& p, const PayloadLimits& limits) {
  const ExecutionGraph& g = p.graph;
  const TraceDocument& doc = *p.doc;
  const NodeSelection sel = select_nodes(g, limits);
  double max_peak = 0;
  for (const GraphNode& n : g.nodes)
    max_peak = std::max(max_peak, static_cast<double>(n.peak_bytes));
  const Context c{p, g, sel, max_peak};
  const MemoryProfile& mem = g.memory;

  std::vector<LiveAllocation> breakdown(
      mem.peak_breakdown.begin(),
      mem.peak_breakdown.begin() + static_cast<std::ptrdiff_t>(std::min(
                                       mem.peak_breakdown.size(), limits.peak_breakdown_rows)));
  const std::string breakdown_json =
      sorted_json([&](auto& w) { memory::write_peak_breakdown(w, breakdown, KeyOrder::sorted); });
  const std::string summary_json =
      sorted_json([&](auto& w) { memory::write_memory_summary(w, mem.summary, KeyOrder::sorted); });
  const std::vector<std::uint32_t> points = select_memory_points(mem, limits);
  std::vector<MemoryTimelinePoint> timeline;
  timeline.reserve(points.size());
  for (std::uint32_t i : points) timeline.push_back(mem.timeline[i]);

  // span_costs items: kept nodes by total time, descending (stable: node order on ties).
  std::vector<std::uint32_t> kept;
  kept.reserve(sel.kept_count);
  for (std::uint32_t i = 0; i < g.nodes.size(); ++i)
    if (sel.kept[i]) kept.push_back(i);
  std::vector<std::uint32_t> by_total = kept;
  std::stable_sort(by_total.begin(), by_total.end(), [&](std::uint32_t a, std::uint32_t b) {
    return g.nodes[a].total_time_ns > g.nodes[b].total_time_ns;
  });

  const evidence::OpTable op_rows = evidence::op_table(g, p.device);
  const std::vector<std::uint32_t> op_rows_kept = select_op_rows(op_rows, limits.table_rows);
  const std::vector<device::KernelRow> kernel_rows = device::kernel_table(doc);
  const std::vector<std::uint32_t> device_items = select_device_work(doc, limits.device_items);
  // Position of each graph node in views.trace.nodes (the kept nodes in order), -1 when folded.
  std::vector<std::int64_t> node_position(g.nodes.size(), -1);
  for (std::size_t i = 0; i < kept.size(); ++i)
    node_position[kept[i]] = static_cast<std::int64_t>(i);
  const bool has_device = !p.gpu_trace.devices.empty();

  output::JsonStream w = page_json();
  w.begin_object();
  // A trace with device work opens on its Overview (the TensorBoard profiler plugin's first page).
  w.key("default_view").string(has_device ? "overview" : "evidence");
  const std::vector<const GradientEvent*> gradients =
      bounded_gradients(doc, limits.peak_breakdown_rows);
  std::uint64_t attention = 0;
  for (const GradientEvent& gr : doc.gradients()) attention += gr.state != GradientState::present;
  w.key("gradients");
  write_gradients(w, gradients);
  // Added: how the payload was bounded (all zero for traces below the limits).
  w.key("payload_limits").begin_object();
  w.key("device_work_kept").u64(device_items.size());
  w.key("device_work_total").u64(doc.device_ops().size());
  w.key("gradients_attention").u64(attention);
  w.key("gradients_total").u64(doc.gradients().size());
  w.key("kernel_rows_total").u64(kernel_rows.size());
  w.key("memory_points_dropped").u64(mem.timeline.size() - timeline.size());
  w.key("memory_points_total").u64(mem.timeline.size());
  w.key("nodes_kept").u64(sel.kept_count);
  w.key("nodes_total").u64(g.nodes.size());
  w.key("operator_rows_total").u64(op_rows.rows.size());
  w.key("ops_folded").u64(sel.dropped_ops);
  w.key("peak_breakdown_total").u64(mem.peak_breakdown.size());
  w.key("spans_folded").u64(sel.dropped_spans);
  w.key("tensors_total").u64(doc.tensors().size());
  w.end_object();
  w.key("schema").string(kViewerSchema);
  w.key("span_tree").begin_array();
  for (std::uint32_t i : kept)
    if (g.nodes[i].kind != GraphNodeKind::op) write_tree_row(w, c, i);
  w.end_array();
  w.key("summary").begin_object();
  w.key("entrypoint").string(g.summary.entrypoint);
  w.key("heaviest_spans");
  write_spans_list(w, g, g.summary.heaviest_spans, true);
  w.key("memory").raw_value(summary_json);
  w.key("peak_breakdown").raw_value(breakdown_json);
  w.key("phase").string(to_string(doc.run().phase));
  w.key("slowest_spans");
  write_spans_list(w, g, g.summary.slowest_spans, false);
  w.key("total_ms").f64(g.summary.total_ms);
  w.end_object();
  w.key("views").begin_object();
  write_device_work(w.key("device_work"), doc, device_items, node_position);
  w.key("evidence").begin_object();
  w.key("comparison");
  if (p.comparison)
    w.raw_value(sorted_json(
        [&](auto& s) { evidence::write_comparison(s, *p.comparison, KeyOrder::sorted); }));
  else
    w.null();
  w.key("facts").begin_array();
  for (const auto& f : p.facts) {
    w.begin_object().key("code").string(f.code).key("label").string(f.label);
    w.key("source")
        .string(f.source)
        .key("unit")
        .string(f.unit)
        .key("value")
        .f64(f.value)
        .end_object();
  }
  w.end_array();
  w.key("findings").begin_array();
  for (const auto& s : p.findings) w.string(s);
  w.end_array();
  w.key("gaps").begin_array();
  for (const auto& s : p.gaps) w.string(s);
  w.end_array();
  w.key("gradients");
  write_gradients(w, gradients);
  w.key("health").raw_value(
      sorted_json([&](auto& s) { evidence::write_health(s, p.health, KeyOrder::sorted); }));
  w.key("provenance").raw_value(sorted_json([&](auto& s) {
    evidence::write_provenance(s, doc.run(), KeyOrder::sorted);
  }));
  w.key("tensors").begin_array();
  const std::size_t tensors =
      std::min<std::size_t>(doc.tensors().size(), limits.peak_breakdown_rows);
  for (std::size_t i = 0; i < tensors; ++i) {
    const TensorEvent& t = doc.tensors()[i];
    w.begin_object().key("category").string(to_string(t.category)).key("device").string(t.device);
    w.key("dtype").string(t.dtype).key("requires_grad").boolean(t.requires_grad).key("shape");
    write_shape(w, t.shape);
    w.key("span_id").string(t.span_id).key("storage_bytes").u64(t.storage_bytes.value_or(0));
    w.key("tensor_id").string(t.tensor_id).end_object();
  }
  w.end_array();
  w.end_object();  // evidence
  import::nsight::write_nsight_json(w.key("gpu"), p.gpu, KeyOrder::sorted);
  write_kernels(w.key("kernels"), kernel_rows, op_rows.device_ns, limits.table_rows);
  w.key("memory").begin_object();
  w.key("by_device").raw_value(sorted_json([&](auto& s) {
    memory::write_by_device(s, mem.by_device, KeyOrder::sorted);
  }));
  w.key("peak_breakdown").raw_value(breakdown_json);
  w.key("summary").raw_value(summary_json);
  w.key("timeline").raw_value(sorted_json([&](auto& s) {
    memory::write_timeline(s, timeline, KeyOrder::sorted);
  }));
  w.end_object();
  write_operators(w.key("operators"), op_rows, op_rows_kept);
  write_overview(w.key("overview"), p, limits.overview_rows);
  w.key("span_costs").begin_object().key("items").begin_array();
  for (std::uint32_t i : by_total) write_span_cost(w, c, i);
  w.end_array().end_object();
  w.key("trace").begin_object();
  w.key("edges").begin_array();
  for (const GraphEdge& e : g.edges) {
    const std::uint32_t owner = edge_owner(g, e);
    const GraphEdgeView view = g.edge_of(e);
    if (owner != kNoIndex ? !sel.kept[owner] : sel.kept_count != g.nodes.size()) {
      // Explicit edges name two spans: keep them when both are kept.
      if (owner != kNoIndex) continue;
      const auto a = doc.find_span(view.from.base), b = doc.find_span(view.to.base);
      if (a == kNoIndex || b == kNoIndex || !sel.kept[a] || !sel.kept[b]) continue;
    }
    write_trace_edge(w, view);
  }
  w.end_array();
  w.key("nodes").begin_array();
  for (std::uint32_t i : kept) write_trace_node(w, c, i);
  w.end_array();
  w.end_object();  // trace
  w.end_object();  // views
  w.end_object();
  return w.take();
}

}  // namespace candle_graph::viewer
