#include "import/pytorch/pytorch_document.hpp"

#include <algorithm>

#include <simdjson.h>

#include "trace/host_nesting.hpp"
#include "trace/progress_counter.hpp"

namespace candle_graph::import::pytorch {
namespace {

using trace_event::CollectiveArgs;
using trace_event::Role;
using trace_event::Slice;

std::optional<std::int64_t> top_level_int(const Model& m, const std::string& key) {
  const auto it = m.top_level.find(key);
  if (it == m.top_level.end()) return std::nullopt;
  simdjson::dom::parser parser;
  simdjson::dom::element e;
  if (parser.parse(it->second).get(e)) return std::nullopt;
  std::int64_t v = 0;
  if (!e.get_int64().get(v)) return v;
  double d = 0;
  if (!e.get_double().get(d)) return static_cast<std::int64_t>(d);
  return std::nullopt;
}

// Newer PyTorch lists the run's process groups in distributedInfo.pg_config ({pg_name, pg_desc,
// backend_config, pg_size, ranks}): one `source.process_group.<name>` tag per group holding its
// entry as compact JSON, so `ranks` can tell traces of different runs apart. Bounded: a group
// name or entry beyond these sizes, or groups beyond the count, are left out.
void add_process_group_tags(simdjson::dom::element info, trace_event::OwnedTags& owned) {
  constexpr std::size_t kMaxGroups = 64, kMaxName = 64, kMaxEntry = 64 * 1024;
  simdjson::dom::array groups;
  if (info["pg_config"].get_array().get(groups)) return;
  std::size_t added = 0;
  for (simdjson::dom::element g : groups) {
    std::string_view name;
    if (added == kMaxGroups || g["pg_name"].get_string().get(name) || name.size() > kMaxName)
      continue;
    std::string entry = simdjson::minify(g);
    if (entry.size() > kMaxEntry) continue;
    owned.add("source.process_group." + std::string(name), std::move(entry));
    ++added;
  }
}

// distributedInfo's rank, world_size and backend as `source.*` tags, when they have the types
// Kineto writes (non-negative integers, a string); anything else is left out, not an error: the
// tags are provenance, and `ranks` says which file lacks a rank.
void add_distributed_tags(const Model& m, trace_event::OwnedTags& owned) {
  const auto it = m.top_level.find("distributedInfo");
  if (it == m.top_level.end()) return;
  simdjson::dom::parser parser;
  simdjson::dom::element info;
  if (parser.parse(it->second).get(info) || !info.is_object()) return;
  for (const char* key : {"rank", "world_size"}) {
    std::int64_t v = -1;
    if (!info[key].get_int64().get(v) && v >= 0)
      owned.add(std::string("source.") + key, std::to_string(v));
  }
  std::string_view backend;
  if (!info["backend"].get_string().get(backend))
    owned.add("source.backend", std::string(backend.substr(0, 64)));
  add_process_group_tags(info, owned);
}

// The model of the run's GPU (`cuda:<device>`) as `source.device_name`, from the entry of
// deviceProperties (computeProperties in Kineto of 2021) whose `id` is the device: `compare` then
// holds two ranks' traces, which name different GPUs of alike machines, to the model rather than
// the index. Left out, not an error, when the entry is missing or malformed, or the name is
// empty, longer than any GPU's or holds control characters: the comparison then holds the index,
// as for any trace.
void add_device_name_tag(const Model& m, std::int32_t device, trace_event::OwnedTags& owned) {
  if (device < 0) return;
  auto it = m.top_level.find("deviceProperties");
  if (it == m.top_level.end()) it = m.top_level.find("computeProperties");
  if (it == m.top_level.end()) return;
  simdjson::dom::parser parser;
  simdjson::dom::array entries;
  if (parser.parse(it->second).get_array().get(entries)) return;
  for (simdjson::dom::element entry : entries) {
    std::int64_t id = -1;
    std::string_view name;
    if (entry["id"].get_int64().get(id) || id != device) continue;
    if (!entry["name"].get_string().get(name) && is_gpu_model_name(name))
      owned.add(std::string(kDeviceNameTag), std::string(name));
    return;
  }
}

// A file with the host ops of more than one process (pytorch.md, meta) gets the tag
// `source.host_processes` listing them: the first eight pids, then how many more. Health makes the
// trace untrusted by it. A string pid is shown quoted when short, else by its length.
void add_host_process_tag(const Model& m, trace_event::OwnedTags& owned) {
  constexpr std::size_t kShown = 8, kLongestName = 64;
  const std::size_t count = m.host_pids.size() + m.host_pid_names.size();
  if (count < 2) return;
  std::vector<std::string> shown;
  for (std::int64_t pid : m.host_pids) shown.push_back(std::to_string(pid));
  for (std::uint32_t id : m.host_pid_names) {
    const std::string_view name = m.strings.str(id);
    shown.push_back(name.size() <= kLongestName
                        ? "\"" + std::string(name) + "\""
                        : "a string of " + std::to_string(name.size()) + " bytes");
  }
  std::string value;
  for (std::size_t i = 0; i < std::min(kShown, shown.size()); ++i)
    value += (i == 0 ? "" : ", ") + shown[i];
  if (count > kShown || m.more_host_processes)
    value += std::string(" and ") + (m.more_host_processes ? "more than " : "") +
             std::to_string(count - kShown) + " more";
  owned.add("source.host_processes", std::move(value));
}

void emit_span(const Assembly& a, std::uint32_t i, TraceDocumentBuilder& out) {
  const std::vector<Draft>& drafts = a.spans.drafts;
  const Draft& d = drafts[i];
  SpanStartEvent s;
  s.id = d.id;
  if (d.parent != kNone) s.parent_id = std::string_view(drafts[d.parent].id);
  s.name = d.name;
  s.start_ns = static_cast<std::uint64_t>(d.begin - a.region.begin);
  s.span_kind = SpanKind::function;
  s.measured = d.measured;
  s.step = d.step;
  out.add(s);
  out.add(SpanEndEvent{d.id, static_cast<std::uint64_t>(d.end - d.begin)});
}

// Host ops and runtime calls carry their inclusive time in total_ns and their exclusive time in
// duration_ns (trace6.md §4.5.1); device work its device time in total_ns and no host time.
void emit_op(const Assembly& a, const PlacedOp& o, std::uint64_t self_ns,
             TraceDocumentBuilder& out) {
  const Model& m = *a.model;
  const Slice& s = m.slices[o.slice];
  OpEvent e;
  e.span_id = a.spans.drafts[o.span].id;
  e.op_name = m.strings.str(s.name);
  e.timestamp_ns = static_cast<std::uint64_t>(std::max<std::int64_t>(s.ts_ns - a.region.begin, 0));
  e.op_kind = s.kind;
  e.total_ns = static_cast<std::uint64_t>(s.dur_ns);
  e.lane = s.lane;
  if (s.correlation >= 0) e.correlation = static_cast<std::uint64_t>(s.correlation);
  OpCollective collective;
  if ((s.role == Role::cpu_op || s.role == Role::device_op) && s.extra != kNone) {
    const CollectiveArgs& c = m.collectives[s.extra];
    collective.name = m.strings.str(c.name);
    if (c.process_group != kNone) collective.process_group = m.strings.str(c.process_group);
    collective.seq = c.seq;
    e.collective = &collective;
  }
  std::string device_label;
  std::vector<std::uint64_t> shape;
  if (s.role == Role::device_op) {
    device_label = "cuda:" + std::to_string(std::max(s.device, 0));
    e.device = device_label;
    e.dtype = "unknown";
    e.storage_bytes = s.bytes;
    e.duration_ns = 0;
  } else if (s.role == Role::runtime) {
    e.device = "cpu";
    e.dtype = "unknown";
    e.duration_ns = self_ns;
  } else {
    e.duration_ns = self_ns;
    shape = m.dims_at(s.dims);
    e.shape = shape;
    e.dtype = s.dtype != kNone ? m.strings.str(s.dtype) : std::string_view("unknown");
    e.device = "cpu";
    e.storage_bytes = 0;  // PyTorch records inputs only; the output's size is unknown
    if (s.input_bytes > 0) e.input_storage_bytes = s.input_bytes;
  }
  out.add(e);
}

void emit_memory(const Assembly& a, TraceDocumentBuilder& out, ProgressCounter& progress) {
  const std::vector<std::optional<ExecutionStep>> inherited = inherited_steps(a.spans);
  const PlacedMemory& memory = a.memory;
  std::string tensor_id;
  for (std::size_t i = 0; i < memory.events.size(); ++i) {
    const PairedMemory& p = memory.events[i];
    tensor_id = "mem-" + std::to_string(p.tensor);
    MemoryEvent e;
    e.timestamp_ns = static_cast<std::uint64_t>(p.ts_ns - a.region.begin);
    e.tensor_id = tensor_id;
    e.span_id = a.spans.drafts[memory.span[i]].id;
    e.device = a.model->strings.str(p.device);
    e.bytes = p.bytes;
    e.action = p.alloc ? MemoryAction::alloc : MemoryAction::free;
    e.dtype = "unknown";
    const auto step = inherited[memory.span[i]];
    e.category = step ? category_for_step(step, false) : MemoryCategory::other;
    out.add(e);
    progress.add();
  }
}

}  // namespace

void emit_meta(const Assembly& a, const ImportReport& report, TraceDocumentBuilder& out) {
  const trace_event::SourceInfo& src = *a.source;
  trace_event::OwnedTags owned;
  owned.add("source.format", src.format);
  owned.add("source.file", src.file_name);
  owned.add("source.events", std::to_string(a.model->events));
  owned.add("source.measured", a.region.measured_name);
  if (src.gzip) owned.add("source.gzip", "true");
  add_distributed_tags(*a.model, owned);
  add_host_process_tag(*a.model, owned);
  add_device_name_tag(*a.model, a.ops.first_device, owned);
  const std::int64_t r0 = a.region.begin;
  // The region's start on the source's own clock (trace timestamps, plus baseTimeNanoseconds
  // when they are relative to it): every other time in the document is relative to it, and
  // `ranks` needs it to put the ranks of one run on one clock.
  std::int64_t source_start = r0;
  std::int64_t epoch = r0;
  if (epoch < 1000000000000000000LL) {
    const auto base = top_level_int(*a.model, "baseTimeNanoseconds");
    epoch = base ? *base + r0 : 0;
    if (base) source_start = *base + r0;
  }
  owned.add("source.region_start_ns", std::to_string(source_start));
  for (const auto& [k, v] : report.repairs) owned.add(k, std::to_string(v));
  const std::vector<Tag> tags = owned.sorted();

  const bool training = a.spans.training;
  const std::uint64_t capture_step = a.region.capture_step;
  const std::string device =
      a.ops.first_device >= 0 ? "cuda:" + std::to_string(a.ops.first_device) : "cpu";
  const std::string run_id = "pytorch-" + a.entrypoint + "-" + std::to_string(r0);
  const std::string correlation =
      a.entrypoint + (training ? "/update-" : "/inference-") + std::to_string(capture_step);
  const std::string timestamp = trace_event::iso_utc(epoch);
  MetaEvent meta;
  meta.schema = kTraceSchema;
  meta.run.run_id = run_id;
  meta.run.correlation_id = correlation;
  meta.run.entrypoint = a.entrypoint;
  meta.run.phase = training ? ExecutionPhase::train : ExecutionPhase::infer;
  meta.run.timestamp = timestamp;
  meta.run.capture_step = capture_step;
  meta.run.warmup_steps = capture_step - 1;
  meta.run.device = device;
  meta.run.timing_mode = TimingMode::host;
  meta.run.tags = tags;
  meta.run.profiler_steps = a.steps;
  out.add(meta);
}

void emit_events(const Assembly& a, TraceDocumentBuilder& out, const ProgressCallback& report) {
  // Exclusive times of the host ops and runtime calls: nested per thread by their extents.
  const std::vector<PlacedOp>& ops = a.ops.ops;
  std::vector<std::uint64_t> lanes, starts, totals;
  std::vector<std::uint32_t> host_index(ops.size(), kNone);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Slice& s = a.model->slices[ops[i].slice];
    if (s.role == Role::device_op) continue;
    host_index[i] = static_cast<std::uint32_t>(lanes.size());
    lanes.push_back(s.lane);
    starts.push_back(static_cast<std::uint64_t>(s.ts_ns - a.region.begin));
    totals.push_back(static_cast<std::uint64_t>(s.dur_ns));
  }
  const HostNesting nesting = nest_intervals(lanes, starts, totals);
  // Every count is known: the document's arrays are allocated once (a trace of millions of ops
  // spent most of its placing in the page faults of arrays growing by doubling).
  out.reserve({.spans = 1 + a.spans.pre.size(),
               .ops = lanes.size(),
               .device_ops = ops.size() - lanes.size(),
               .memory = a.memory.events.size()});
  ProgressCounter progress(report, ops.size() + a.memory.events.size());
  emit_span(a, 0, out);
  for (std::uint32_t s : a.spans.pre) emit_span(a, s, out);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    emit_op(a, ops[i], host_index[i] == kNone ? 0 : nesting.self_ns[host_index[i]], out);
    progress.add();
  }
  emit_memory(a, out, progress);
  progress.finish();
}

}  // namespace candle_graph::import::pytorch
