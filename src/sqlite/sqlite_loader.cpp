#include "sqlite/sqlite_loader.hpp"

#include <exception>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "candle_graph/error.hpp"
#include "device/kernel_table.hpp"
#include "output/json_text.hpp"
#include "sqlite/batched_insert.hpp"
#include "trace/progress_counter.hpp"

namespace candle_graph::sqlite {

namespace {

// The distributed rank of a run, as its trace states it (Kineto's distributedInfo.rank, kept as
// the tag source.rank), else none: every table's last column, so the rows of many ranks in one
// database can be told apart and grouped without a join.
using RunRank = std::optional<std::uint64_t>;

RunRank run_rank(const TraceRunMeta& run) {
  return run.find_number_tag<std::uint64_t>("source.rank");
}

using Insert = BatchedInsert;

// A shape as JSON text (`[2,3]`), so SQLite's json_each / json_array_length read it.
const std::string& shape_json(std::span<const std::uint64_t> shape, std::string& buf) {
  buf.assign(1, '[');
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) buf += ',';
    output::append_u64(buf, shape[i]);
  }
  buf += ']';
  return buf;
}

// Depth of every span (roots 0) from the document's parent links. The graph is only built for
// trusted traces, whose parent links have no cycle; the step bound guards anyway.
std::vector<std::uint32_t> span_depths(const TraceDocument& doc) {
  const auto& parent = doc.span_parent();
  const std::size_t n = doc.spans().size();
  std::vector<std::uint32_t> depth(n, kNoIndex);
  std::vector<std::uint32_t> chain;
  for (std::uint32_t s = 0; s < n; ++s) {
    std::uint32_t at = s;
    chain.clear();
    while (at != kNoIndex && depth[at] == kNoIndex && chain.size() <= n) {
      chain.push_back(at);
      at = parent[at];
    }
    std::uint32_t d = at == kNoIndex || depth[at] == kNoIndex ? 0 : depth[at] + 1;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) depth[*it] = d++;
  }
  return depth;
}

std::string quoted(std::string_view s) {
  std::string out;
  output::append_json_string(out, s.substr(0, 200));
  return out;
}

void load_meta(const Connection& db, RunRank rank, const evidence::EvidencePacket& packet,
               std::string_view source) {
  const TraceDocument& doc = *packet.doc;
  const TraceRunMeta& run = doc.run();
  const EvidenceCoverage& c = packet.health.coverage;
  const MemorySummary& m = packet.graph.memory.summary;
  Insert runs(db, "runs", 38, rank);
  runs.text(run.run_id).text(source).text(doc.schema()).text(run.correlation_id);
  runs.text(run.entrypoint).text(to_string(run.phase)).text(run.timestamp);
  runs.u64(run.capture_step).u64(run.warmup_steps).text(run.device);
  runs.boolean(run.measured_region_device_synchronized).text(to_string(run.timing_mode));
  runs.text(run.candle_version).u64(doc.event_count()).boolean(packet.health.trusted);
  runs.u64(c.spans).u64(c.closed_spans).u64(c.root_spans).u64(c.measured_spans);
  runs.u64(c.operations).u64(c.tensors).u64(c.memory_events).u64(c.device_memory_samples);
  runs.u64(c.gradients).u64(c.edges).u64(c.forward_spans).u64(c.backward_spans);
  runs.u64(c.optimizer_spans).f64(packet.graph.summary.total_ms);
  runs.u64(m.peak_bytes).u64(m.peak_timestamp_ns);
  if (m.peak_device.empty())
    runs.null();
  else
    runs.text(m.peak_device);
  runs.u64(m.alloc_count).u64(m.free_count).u64(m.total_alloc_bytes);
  runs.u64(m.autograd_retained_bytes)
      .text(std::string_view(import::nsight::to_string(packet.gpu.status)));
  runs.opt_owned(packet.gpu.reason).done();

  Insert tags(db, "run_tags", 3, rank);
  for (const Tag& t : run.tags) tags.text(run.run_id).text(t.key).text(t.value).done();
  Insert cats(db, "peak_by_category", 3, rank);
  for (MemoryCategory cat : m.peak_by_category.keys())
    cats.text(run.run_id).text(to_string(cat)).u64(m.peak_by_category.get(cat)).done();
}

void load_spans(const Connection& db, RunRank rank, const evidence::EvidencePacket& packet) {
  const TraceDocument& doc = *packet.doc;
  const ExecutionGraph& g = packet.graph;
  const std::vector<std::uint32_t> depth = span_depths(doc);
  Insert spans(db, "spans", 20, rank);
  for (std::uint32_t s = 0; s < doc.spans().size(); ++s) {
    const SpanRecord& rec = doc.spans()[s];
    const GraphNode& node = g.nodes[s];
    spans.text(doc.run().run_id)
        .u64(s)
        .text(rec.id)
        .text(rec.parent_id)
        .index(doc.span_parent()[s]);
    spans.text(rec.name).text(to_string(rec.kind)).text(to_string(node.kind)).boolean(rec.measured);
    if (rec.step)
      spans.text(to_string(*rec.step));
    else
      spans.null();
    spans.u64(depth[s]).u64(rec.start_ns).boolean(rec.closed).u64(rec.duration_ns);
    spans.u64(node.total_time_ns).u64(node.self_time_ns).u64(node.bytes).u64(node.peak_bytes);
    spans.u64(packet.device.span_self_ns[s]).u64(packet.device.span_total_ns[s]).done();
  }
}

void load_ops(const Connection& db, RunRank rank, const evidence::EvidencePacket& packet) {
  const TraceDocument& doc = *packet.doc;
  const ExecutionGraph& g = packet.graph;
  const device::DeviceTime& device = packet.device;
  const std::size_t n_spans = doc.spans().size();
  Insert ops(db, "ops", 23, rank);
  std::string id, shape;
  for (std::uint32_t k = 0; k < doc.ops().size(); ++k) {
    const OpEvent& op = doc.ops()[k];
    const GraphNode& node = g.nodes[n_spans + k];
    id.clear();
    g.node_id(static_cast<std::uint32_t>(n_spans + k)).append_to(id);
    ops.text(doc.run().run_id).u64(k).owned(id).text(op.span_id).index(doc.op_span()[k]);
    ops.u64(node.op_ordinal).text(op.op_name).u64(op.timestamp_ns).u64(op.duration_ns);
    ops.u64(node.self_time_ns).text(op.device).text(op.dtype).owned(shape_json(op.shape, shape));
    ops.u64(op.storage_bytes.value_or(0)).u64(op.input_storage_bytes.value_or(0));
    ops.text(op.output).u64(op.inputs.size());
    // trace6.md §4.5.1: the inclusive extent (duration_ns for an op without total_ns), and the
    // device time of the work the op launched, itself and through the ops nested in it.
    ops.text(to_string(op.op_kind)).u64(op.total_ns.value_or(op.duration_ns)).u64(op.lane);
    ops.u64(op.correlation).u64(device.op_self_ns[k]).u64(device.op_total_ns[k]).done();
  }
}

// One row per device op (kernel, memcpy, memset, sync) with the host op it is attributed to and
// its runtime call, as device time attribution found them (device/device_time.hpp).
void load_kernels(const Connection& db, RunRank rank, const evidence::EvidencePacket& packet) {
  const TraceDocument& doc = *packet.doc;
  const device::DeviceTime& device = packet.device;
  device::DemangledNames names;  // bound without a copy: declared before the statement
  Insert kernels(db, "kernels", 15, rank);
  for (std::uint32_t k = 0; k < doc.device_ops().size(); ++k) {
    const OpEvent& op = doc.device_ops()[k];
    kernels.text(doc.run().run_id).u64(k).text(op.op_name).text(names(op.op_name));
    kernels.text(to_string(op.op_kind)).text(op.device).u64(op.lane).u64(op.timestamp_ns);
    kernels.u64(device::device_duration(op)).u64(op.correlation);
    kernels.u64(op.storage_bytes.value_or(0)).index(device.launcher[k]);
    kernels.index(device.launch_call[k]).text(op.span_id).index(doc.device_op_span()[k]).done();
  }
}

// The GPU analysis of the trace's own device work (device/gpu_analysis.hpp): one row per device
// and one per stream, the numbers of `query --kind gpu`.
void load_gpu(const Connection& db, RunRank rank, const evidence::EvidencePacket& packet) {
  const std::string_view run_id = packet.doc->run().run_id;
  Insert devices(db, "gpu_devices", 21, rank);
  Insert streams(db, "gpu_streams", 7, rank);
  for (const device::DeviceGpu& d : packet.gpu_trace.devices) {
    const device::LaunchStats& l = d.launches;
    devices.text(run_id).text(d.device).u64(d.window_ns).u64(d.busy_ns).u64(d.idle_ns);
    devices.u64(d.idle_host_wait_ns).u64(d.idle_kernel_wait_ns).u64(d.idle_other_ns);
    devices.u64(d.compute_ns).u64(d.communication_ns).u64(d.memory_ns).u64(d.sync_ns);
    devices.f64(d.comm_compute_overlap).u64(l.count).u64(l.short_kernels).u64(l.runtime_outliers);
    devices.u64(l.delay_outliers).u64(l.mean_delay_ns).u64(l.p50_delay_ns).u64(l.p95_delay_ns);
    devices.u64(l.max_delay_ns).done();
    for (const device::StreamIdle& s : d.streams) {
      streams.text(run_id).text(d.device).u64(s.stream).u64(s.busy_ns).u64(s.host_wait_ns);
      streams.u64(s.kernel_wait_ns).u64(s.other_wait_ns).done();
    }
  }
}

// The tables that need only the document (no analysis): they can load while the analysis runs.
void load_document_tables(const Connection& db, RunRank rank, const TraceDocument& doc) {
  const std::string_view run_id = doc.run().run_id;
  std::string shape;
  Insert inputs(db, "op_inputs", 4, rank);
  for (std::uint32_t k = 0; k < doc.ops().size(); ++k) {
    const OpEvent& op = doc.ops()[k];
    for (std::size_t i = 0; i < op.inputs.size(); ++i)
      inputs.text(run_id).u64(k).u64(i).text(op.inputs[i]).done();
  }
  Insert tensors(db, "tensors", 11, rank);
  for (std::uint32_t k = 0; k < doc.tensors().size(); ++k) {
    const TensorEvent& t = doc.tensors()[k];
    tensors.text(run_id).u64(k).text(t.span_id).index(doc.tensor_span()[k]).text(t.tensor_id);
    tensors.owned(shape_json(t.shape, shape)).text(t.dtype).text(t.device).boolean(t.requires_grad);
    tensors.u64(t.storage_bytes.value_or(0)).text(to_string(t.category)).done();
  }
  Insert memory(db, "memory_events", 13, rank);
  for (std::uint32_t k = 0; k < doc.memory().size(); ++k) {
    const MemoryEvent& e = doc.memory()[k];
    memory.text(run_id).u64(k).u64(e.timestamp_ns).text(to_string(e.action)).text(e.tensor_id);
    memory.text(e.span_id).index(doc.memory_span()[k]).text(e.op_name).text(e.device);
    memory.u64(e.bytes).owned(shape_json(e.shape, shape)).text(e.dtype);
    memory.text(to_string(e.category)).done();
  }
  Insert device(db, "device_memory", 7, rank);
  for (std::uint32_t k = 0; k < doc.device_memory().size(); ++k) {
    const DeviceMemoryEvent& e = doc.device_memory()[k];
    device.text(run_id).u64(k).u64(e.timestamp_ns).text(e.device).u64(e.used_bytes);
    device.u64(e.free_bytes).u64(e.reserved_bytes).done();
  }
  Insert gradients(db, "gradients", 7, rank);
  for (std::uint32_t k = 0; k < doc.gradients().size(); ++k) {
    const GradientEvent& e = doc.gradients()[k];
    gradients.text(run_id).u64(k).text(e.event_id).text(e.root).text(e.key);
    gradients.text(to_string(e.state)).f64(e.norm).done();
  }
}

void load_graph_memory(const Connection& db, RunRank rank, const evidence::EvidencePacket& packet) {
  const TraceDocument& doc = *packet.doc;
  const ExecutionGraph& g = packet.graph;
  const std::string_view run_id = doc.run().run_id;
  std::string from, to, shape;
  Insert edges(db, "edges", 7, rank);
  for (std::uint32_t k = 0; k < g.edges.size(); ++k) {
    const GraphEdgeView e = g.edge(k);
    from.clear();
    to.clear();
    e.from.append_to(from);
    e.to.append_to(to);
    edges.text(run_id).u64(k).owned(from).owned(to).text(to_string(e.kind)).u64(e.duration_ns);
    edges.text(e.label).done();
  }
  constexpr MemoryCategory kCategoryColumns[] = {
      MemoryCategory::activation, MemoryCategory::gradient, MemoryCategory::optimizer,
      MemoryCategory::other, MemoryCategory::parameter};
  Insert timeline(db, "memory_timeline", 11, rank);
  for (std::uint32_t k = 0; k < g.memory.timeline.size(); ++k) {
    const MemoryTimelinePoint& p = g.memory.timeline[k];
    timeline.text(run_id).u64(k).u64(p.timestamp_ns).text(p.device).u64(p.live_bytes);
    timeline.u64(p.free_bytes);
    for (MemoryCategory c : kCategoryColumns) {
      if (p.by_category.has(c))
        timeline.u64(p.by_category.get(c));
      else
        timeline.null();
    }
    timeline.done();
  }
  Insert peak(db, "peak_allocations", 11, rank);
  for (std::uint32_t k = 0; k < g.memory.peak_breakdown.size(); ++k) {
    const LiveAllocation& a = g.memory.peak_breakdown[k];
    peak.text(run_id).u64(k).text(a.tensor_id).text(a.span_id).index(doc.find_span(a.span_id));
    peak.text(a.op_name).u64(a.bytes).owned(shape_json(a.shape, shape)).text(a.dtype);
    peak.text(a.device).text(to_string(a.category)).done();
  }
  Insert devices(db, "memory_by_device", 7, rank);
  for (const DeviceMemoryStats& d : g.memory.by_device) {
    devices.text(run_id).text(d.device).u64(d.capacity_bytes).u64(d.peak_bytes);
    devices.u64(d.peak_timestamp_ns).u64(d.alloc_count).u64(d.free_count).done();
  }
}

void load_evidence(const Connection& db, RunRank rank, const evidence::EvidencePacket& packet) {
  const std::string_view run_id = packet.doc->run().run_id;
  Insert issues(db, "health_issues", 5, rank);
  for (std::uint32_t k = 0; k < packet.health.issues.size(); ++k) {
    const HealthIssue& i = packet.health.issues[k];
    issues.text(run_id).u64(k).text(to_string(i.severity)).text(i.code).text(i.message).done();
  }
  Insert findings(db, "findings", 3, rank);
  for (std::uint32_t k = 0; k < packet.findings.size(); ++k)
    findings.text(run_id).u64(k).text(packet.findings[k]).done();
  Insert facts(db, "facts", 7, rank);
  for (std::uint32_t k = 0; k < packet.facts.size(); ++k) {
    const evidence::EvidenceFact& f = packet.facts[k];
    facts.text(run_id).u64(k).text(f.code).text(f.label).f64(f.value).text(f.unit);
    facts.text(f.source).done();
  }
  Insert gaps(db, "gaps", 3, rank);
  for (std::uint32_t k = 0; k < packet.gaps.size(); ++k)
    gaps.text(run_id).u64(k).text(packet.gaps[k]).done();
}

void load_nsight(const Connection& db, RunRank rank, const evidence::EvidencePacket& packet) {
  const import::nsight::NsightEvidence& gpu = packet.gpu;
  const std::string_view run_id = packet.doc->run().run_id;
  Insert summary(db, "nsight_summary", 10, rank);
  auto summaries = [&](std::string_view section,
                       const std::vector<import::nsight::NsightSummaryRow>& rows) {
    for (std::uint32_t k = 0; k < rows.size(); ++k) {
      const import::nsight::NsightSummaryRow& r = rows[k];
      summary.text(run_id).text(section).u64(k).text(r.name).opt_owned(r.category);
      summary.u64(r.total_ns).u64(r.count).u64(r.average_ns).u64(r.minimum_ns).u64(r.maximum_ns);
      summary.done();
    }
  };
  summaries("kernels", gpu.kernels);
  summaries("runtime_calls", gpu.runtime_calls);
  summaries("memory_operations", gpu.memory_operations);
  summaries("nvtx_summary", gpu.nvtx_summary);
  Insert timeline(db, "nsight_timeline", 18, rank);
  auto timelines = [&](std::string_view section,
                       const std::vector<import::nsight::NsightTimelineRow>& rows) {
    for (std::uint32_t k = 0; k < rows.size(); ++k) {
      const import::nsight::NsightTimelineRow& r = rows[k];
      timeline.text(run_id).text(section).u64(k).text(r.name).text(r.kind).u64(r.device);
      timeline.u64(r.context).u64(r.stream).u64(r.correlation_id).opt_owned(r.semantic_key);
      timeline.u64(r.start_ns).u64(r.duration_ns).u64(r.projected_start_ns);
      timeline.u64(r.projected_duration_ns).u64(r.gpu_operations).boolean(r.matched);
      timeline.opt_owned(r.category).u64(r.bytes).done();
    }
  };
  timelines("nvtx_ranges", gpu.nvtx_ranges);
  timelines("gpu_timeline", gpu.gpu_timeline);
  timelines("nvtx_host_ranges", gpu.nvtx_host_ranges);
}

// Every table whose rows come from the analyses (graph/3, memory profile, health, evidence).
void load_analysis_tables(const Connection& db, RunRank rank,
                          const evidence::EvidencePacket& packet, std::string_view source) {
  load_meta(db, rank, packet, source);
  load_spans(db, rank, packet);
  load_ops(db, rank, packet);
  load_kernels(db, rank, packet);
  load_gpu(db, rank, packet);
  load_graph_memory(db, rank, packet);
  load_evidence(db, rank, packet);
  load_nsight(db, rank, packet);
}

}  // namespace

bool has_run(const Connection& db, std::string_view run_id) {
  Statement find(db, "SELECT 1 FROM runs WHERE run_id = ?1");
  find.bind_text(1, run_id);
  return find.step();
}

void check_new_run(const Connection& db, std::string_view run_id, std::string_view source) {
  if (has_run(db, run_id))
    throw Error(db.path(), 0,
                "run_id " + quoted(run_id) + " (from " + std::string(source) +
                    ") is already in the database; each run is stored once");
}

namespace {

// Rows in the tables `load_document_tables` writes for `doc`, counted the way it writes them.
std::uint64_t document_rows(const TraceDocument& doc) {
  std::uint64_t rows = doc.tensors().size() + doc.memory().size() + doc.device_memory().size() +
                       doc.gradients().size();
  for (const OpEvent& op : doc.ops()) rows += op.inputs.size();
  return rows;
}

// Rows in the tables `load_analysis_tables` writes for `packet`, counted the way it writes them.
std::uint64_t analysis_rows(const evidence::EvidencePacket& packet) {
  const TraceDocument& doc = *packet.doc;
  const ExecutionGraph& g = packet.graph;
  std::uint64_t rows = 1 + doc.run().tags.size() + g.memory.summary.peak_by_category.keys().size();
  rows += doc.spans().size() + doc.ops().size() + doc.device_ops().size();
  for (const device::DeviceGpu& d : packet.gpu_trace.devices) rows += 1 + d.streams.size();
  rows += g.edges.size() + g.memory.timeline.size() + g.memory.peak_breakdown.size() +
          g.memory.by_device.size();
  rows += packet.health.issues.size() + packet.findings.size() + packet.facts.size() +
          packet.gaps.size();
  const import::nsight::NsightEvidence& n = packet.gpu;
  rows += n.kernels.size() + n.runtime_calls.size() + n.memory_operations.size() +
          n.nvtx_summary.size() + n.nvtx_ranges.size() + n.gpu_timeline.size() +
          n.nvtx_host_ranges.size();
  return rows;
}

// Counts the rows SQLite inserts (its update hook, called for every row of a table) and reports
// them, every few thousand, as a share of the step's rows. Installed only when someone watches:
// the hook costs a call per row.
class RowProgress {
 public:
  RowProgress(const Connection& db, const StepProgress& report) : db_(db.get()) {
    if (!report) return;
    step_report_ = [this, &report](std::uint64_t done, std::uint64_t total) {
      report(step_, done, total);
    };
    sqlite3_update_hook(db_, &RowProgress::on_row, this);
  }
  RowProgress(const RowProgress&) = delete;
  RowProgress& operator=(const RowProgress&) = delete;
  ~RowProgress() {
    if (step_report_) sqlite3_update_hook(db_, nullptr, nullptr);
  }
  // Called by the thread that inserts the step's rows, before it does.
  void start(std::string_view step, std::uint64_t rows) {
    step_ = step;
    rows_.emplace(step_report_, rows);
  }
  void finish() { rows_->finish(); }

 private:
  static void on_row(void* self, int, const char*, const char*, sqlite3_int64) {
    auto& p = *static_cast<RowProgress*>(self);
    if (p.rows_) p.rows_->add();
  }
  sqlite3* db_;
  ProgressCallback step_report_;  // the step's rows, to the StepProgress; empty: nobody watches
  std::string_view step_;
  std::optional<ProgressCounter> rows_;
};

}  // namespace

void load_run_overlapped(const Connection& db, const TraceDocument& doc, std::string_view source,
                         const std::function<evidence::EvidencePacket()>& analyse,
                         const StepProgress& progress) {
  check_new_run(db, doc.run().run_id, source);
  const RunRank rank = run_rank(doc.run());
  RowProgress rows(db, progress);
  // The connection belongs to the loader thread until join(); the analysis only reads `doc`.
  std::exception_ptr loader_error;
  std::thread loader([&] {
    try {
      rows.start("trace tables", document_rows(doc));
      load_document_tables(db, rank, doc);
      rows.finish();
    } catch (...) {
      loader_error = std::current_exception();
    }
  });
  std::optional<evidence::EvidencePacket> packet;
  std::exception_ptr analysis_error;
  try {
    packet.emplace(analyse());
  } catch (...) {
    analysis_error = std::current_exception();
  }
  loader.join();
  if (analysis_error) std::rethrow_exception(analysis_error);
  if (loader_error) std::rethrow_exception(loader_error);
  rows.start("analysis tables", analysis_rows(*packet));
  load_analysis_tables(db, rank, *packet, source);
  rows.finish();
}

}  // namespace candle_graph::sqlite
