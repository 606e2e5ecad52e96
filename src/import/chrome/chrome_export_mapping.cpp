// candle-graph's own Chrome export (otherData.schema == "candle-graph/chrome/1") back to trace/6:
// spans are `X` events with cat "span" and ops `X` events with cat "op"; their args carry the
// original ids, measured flag, step, kind and exact nanoseconds, so convert(export(trace)) keeps
// span names, op counts and durations. Device slices (cat "device" and "sync") carry the device
// ops' fields the same way and become device ops again. Counters, flows and metadata are views
// derived from the trace and are not read back (counted in the tags).
#include <algorithm>

#include <simdjson.h>

#include "candle_graph/error.hpp"
#include "candle_graph/trace.hpp"
#include "format/chrome.hpp"
#include "import/chrome/chrome_importer.hpp"
#include "import/trace_event/trace_event_source.hpp"
#include "trace/progress_counter.hpp"

namespace candle_graph::import::chrome {
namespace {

using trace_event::CandleOpArgs;
using trace_event::CandleSpanArgs;
using trace_event::kNone;
using trace_event::Model;
using trace_event::Role;
using trace_event::Slice;

struct OtherData {
  std::string entrypoint, run_id, correlation_id, phase, device, timing_mode, timestamp;
  std::optional<std::string> candle_version;
  std::uint64_t capture_step = 1, warmup_steps = 0;
  bool has_warmup = false;
  bool device_synchronized = false;
  std::vector<std::pair<std::string, std::string>> tags;
  std::vector<ProfilerStepRecord> profiler_steps;
  std::uint64_t dropped_profiler_steps = 0;  // entries without three unsigned integers
};

// `profiler_steps` (written since the export of PyTorch traces kept their steps): the entries
// with `step`, `wall_ns` and `device_busy_ns`, each an unsigned integer; the rest are counted, and
// a value that is not an array counts as one.
void read_profiler_steps(simdjson::dom::object obj, OtherData* out) {
  simdjson::dom::element value;
  if (obj["profiler_steps"].get(value)) return;  // absent
  simdjson::dom::array steps;
  if (value.get_array().get(steps)) {
    out->dropped_profiler_steps = 1;
    return;
  }
  for (simdjson::dom::element e : steps) {
    ProfilerStepRecord r;
    simdjson::dom::object s;
    if (e.get_object().get(s) || s["step"].get_uint64().get(r.step) ||
        s["wall_ns"].get_uint64().get(r.wall_ns) ||
        s["device_busy_ns"].get_uint64().get(r.device_busy_ns)) {
      ++out->dropped_profiler_steps;
      continue;
    }
    out->profiler_steps.push_back(r);
  }
}

bool read_other_data(const Model& m, OtherData* out) {
  const auto it = m.top_level.find("otherData");
  if (it == m.top_level.end()) return false;
  simdjson::dom::parser parser;
  simdjson::dom::object obj;
  if (parser.parse(it->second).get_object().get(obj)) return false;
  std::string_view schema;
  if (obj["schema"].get_string().get(schema) || schema != format::chrome::kSchema) return false;
  if (!out) return true;
  auto str = [&](const char* key, std::string& dst) {
    std::string_view s;
    if (!obj[key].get_string().get(s)) dst = std::string(s);
  };
  str("entrypoint", out->entrypoint);
  str("run_id", out->run_id);
  str("correlation_id", out->correlation_id);
  str("phase", out->phase);
  str("device", out->device);
  str("timing_mode", out->timing_mode);
  str("timestamp", out->timestamp);
  std::string version;
  str("candle_version", version);
  if (!version.empty()) out->candle_version = version;
  bool synchronized = false;
  if (!obj["measured_region_device_synchronized"].get_bool().get(synchronized))
    out->device_synchronized = synchronized;
  std::uint64_t v = 0;
  if (!obj["capture_step"].get_uint64().get(v)) out->capture_step = v;
  if (!obj["warmup_steps"].get_uint64().get(v)) {
    out->warmup_steps = v;
    out->has_warmup = true;
  }
  simdjson::dom::object tags;
  if (!obj["tags"].get_object().get(tags)) {
    for (auto kv : tags) {
      std::string_view s;
      if (!kv.value.get_string().get(s))
        out->tags.emplace_back(std::string(kv.key), std::string(s));
    }
  }
  read_profiler_steps(obj, out);
  return true;
}

// A device slice (chrome.md §E8) is device work whatever its args say: never a host op, which
// would count its device time as host time.
OpKind op_kind_of(const Slice& s, const CandleOpArgs& a) {
  const auto kind = static_cast<OpKind>(a.op_kind);
  if (s.role != Role::candle_device || is_device_kind(kind)) return kind;
  return s.kind == OpKind::sync ? OpKind::sync : OpKind::kernel;
}

}  // namespace

ImportedTrace ChromeExportImporter::read(const std::filesystem::path& input,
                                         const ImportOptions& options) const {
  const std::string path = input.string();
  trace_event::ScannedTrace scanned =
      trace_event::scan_trace_events(input, options.progress, options.threads);
  const Model& m = scanned.model;
  trace_event::SourceInfo& src = scanned.source;
  src.format = kChromeExportFormat;
  OtherData od;
  if (src.bare_array || !read_other_data(m, &od))
    throw Error(path, 0,
                "not a candle-graph Chrome export: its otherData.schema is not " +
                    std::string(format::chrome::kSchema));
  trace_event::RepairCounts rep;
  std::vector<std::uint32_t> spans, ops;
  for (std::uint32_t i = 0; i < m.slices.size(); ++i) {
    const Role r = m.slices[i].role;
    if (r == Role::candle_span) {
      spans.push_back(i);
    } else if (r == Role::candle_op || r == Role::candle_device) {
      ops.push_back(i);
    } else {
      ++rep["convert.ignored.non-span/op slices"];
    }
  }
  if (spans.empty()) {
    const std::string rejected = m.bad_values.describe_rejections(m.events);
    throw Error(path, 0,
                "candle-graph Chrome export without span events" +
                    (rejected.empty() ? std::string() : " (" + rejected + ")"));
  }
  auto start_of = [&](std::uint32_t i) {
    const Slice& s = m.slices[i];
    const auto& a = m.candle_spans[s.extra];
    return a.start_ns ? *a.start_ns
                      : static_cast<std::uint64_t>(std::max<std::int64_t>(s.ts_ns, 0));
  };
  auto dur_of = [&](std::uint32_t i) {
    const Slice& s = m.slices[i];
    const auto& a = m.candle_spans[s.extra];
    return a.duration_ns ? *a.duration_ns : static_cast<std::uint64_t>(s.dur_ns);
  };
  std::stable_sort(spans.begin(), spans.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (start_of(a) != start_of(b)) return start_of(a) < start_of(b);
    return dur_of(a) > dur_of(b);
  });
  trace_event::add_ignored(rep, m.ignored);
  rep["convert.ignored.metadata"] = m.metadata_events;
  rep["convert.flows_not_mapped"] = m.flows.size();
  rep["convert.memory_instants_not_mapped"] = m.memory.size();
  rep["convert.skipped_malformed_events"] = m.malformed_events;
  rep["convert.zeroed_negative_or_unreadable_durations"] = m.zeroed_durations;
  trace_event::add_bad_values(rep, m.bad_values);
  rep["convert.dropped_profiler_steps"] = od.dropped_profiler_steps;

  ImportReport report;
  report.format = src.format;
  report.source_events = m.events;
  report.repairs = trace_event::nonzero(rep);
  trace_event::OwnedTags owned;
  for (auto& [k, v] : od.tags) owned.add(k, v);
  owned.add("source.format", src.format);
  owned.add("source.file", src.file_name);
  for (const auto& [k, v] : report.repairs) owned.add(k, std::to_string(v));
  const std::vector<Tag> tags = owned.sorted();

  if (od.entrypoint.empty()) od.entrypoint = "candle-graph";
  if (od.run_id.empty()) od.run_id = "converted-" + od.entrypoint;
  const auto phase = parse_execution_phase(od.phase).value_or(ExecutionPhase::train);
  if (od.correlation_id.empty()) {
    od.correlation_id = od.entrypoint +
                        (phase == ExecutionPhase::train ? "/update-" : "/inference-") +
                        std::to_string(od.capture_step);
  }
  if (od.timestamp.empty()) od.timestamp = trace_event::iso_utc(0);
  if (od.device.empty()) od.device = "cpu";
  MetaEvent meta;
  meta.schema = kTraceSchema;
  meta.run.run_id = od.run_id;
  meta.run.correlation_id = od.correlation_id;
  meta.run.entrypoint = od.entrypoint;
  meta.run.phase = phase;
  meta.run.timestamp = od.timestamp;
  meta.run.capture_step = od.capture_step;
  meta.run.warmup_steps =
      od.has_warmup ? od.warmup_steps : (od.capture_step > 0 ? od.capture_step - 1 : 0);
  meta.run.device = od.device;
  meta.run.timing_mode = parse_timing_mode(od.timing_mode).value_or(TimingMode::host);
  meta.run.measured_region_device_synchronized = od.device_synchronized;
  if (od.candle_version) meta.run.candle_version = *od.candle_version;
  meta.run.tags = tags;
  meta.run.profiler_steps = od.profiler_steps;
  TraceDocumentBuilder out(path);
  // Every count is known: the document's arrays are allocated once, not grown by doubling.
  std::size_t device_ops = 0;
  for (std::uint32_t i : ops)
    device_ops += is_device_kind(op_kind_of(m.slices[i], m.candle_ops[m.slices[i].extra])) ? 1 : 0;
  out.reserve({.spans = spans.size(), .ops = ops.size() - device_ops, .device_ops = device_ops});
  out.add(meta);
  ProgressCounter placed(options.converting, spans.size() + ops.size());

  std::string fallback_id;
  for (std::uint32_t i : spans) {
    const Slice& s = m.slices[i];
    const CandleSpanArgs& a = m.candle_spans[s.extra];
    if (a.span_id == kNone)
      throw Error(path, 0, "candle-graph Chrome export: a span without args.span_id");
    SpanStartEvent e;
    e.id = m.strings.str(a.span_id);
    if (a.parent_id != kNone) e.parent_id = m.strings.str(a.parent_id);
    e.name = m.strings.str(s.name);
    e.start_ns = start_of(i);
    e.span_kind = static_cast<SpanKind>(a.span_kind);
    e.measured = a.measured;
    if (a.step >= 0) e.step = static_cast<ExecutionStep>(a.step);
    out.add(e);
    out.add(SpanEndEvent{e.id, dur_of(i)});
    placed.add();
  }
  std::vector<std::string_view> inputs;
  std::vector<std::uint64_t> shape;
  for (std::uint32_t i : ops) {
    const Slice& s = m.slices[i];
    const CandleOpArgs& a = m.candle_ops[s.extra];
    if (a.span_id == kNone)
      throw Error(path, 0, "candle-graph Chrome export: an op without args.span_id");
    OpEvent e;
    e.span_id = m.strings.str(a.span_id);
    e.op_name = m.strings.str(a.op_name != kNone ? a.op_name : s.name);
    inputs.clear();
    for (std::uint32_t k = 0; k < a.inputs_count; ++k) {
      inputs.push_back(m.strings.str(m.candle_inputs[a.inputs_begin + k]));
    }
    e.inputs = inputs;
    if (a.output != kNone) e.output = m.strings.str(a.output);
    shape = m.dims_at(a.shape);
    e.shape = shape;
    e.dtype = a.dtype != kNone ? m.strings.str(a.dtype) : std::string_view("unknown");
    e.device = a.device != kNone ? m.strings.str(a.device) : std::string_view(od.device);
    e.duration_ns = a.duration_ns ? *a.duration_ns : static_cast<std::uint64_t>(s.dur_ns);
    e.timestamp_ns = a.timestamp_ns
                         ? *a.timestamp_ns
                         : static_cast<std::uint64_t>(std::max<std::int64_t>(s.ts_ns, 0));
    e.storage_bytes = a.storage_bytes;
    e.input_storage_bytes = a.input_storage_bytes;
    e.op_kind = op_kind_of(s, a);
    e.total_ns = a.total_ns;
    // Device work takes no host time (trace6.md §4.5.1): a slice that lost its fields keeps its
    // own duration as device time, never as host time.
    if (is_device_kind(e.op_kind)) {
      if (!e.total_ns) e.total_ns = e.duration_ns;
      e.duration_ns = 0;
    }
    e.lane = a.lane;
    e.correlation = a.correlation;
    OpCollective collective;
    if (a.collective != kNone) {
      collective.name = m.strings.str(a.collective);
      if (a.process_group != kNone) collective.process_group = m.strings.str(a.process_group);
      collective.seq = a.collective_seq;
      e.collective = &collective;
    }
    out.add(e);
    placed.add();
  }
  placed.finish();
  return {out.finish(), std::move(report)};
}

}  // namespace candle_graph::import::chrome
