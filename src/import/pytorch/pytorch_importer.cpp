// The passes, in order: scan and decode (import/trace_event), classify the events, choose the
// measured region, plan the span tree, place ops and memory in it, count what was not mapped,
// emit the document.
#include "import/pytorch/pytorch_importer.hpp"

#include <unordered_map>

#include <simdjson.h>

#include "import/pytorch/pytorch_document.hpp"

namespace candle_graph::import::pytorch {
namespace {

using trace_event::Flow;

std::string top_level_string(const Model& m, const std::string& key) {
  const auto it = m.top_level.find(key);
  if (it == m.top_level.end()) return {};
  simdjson::dom::parser parser;
  simdjson::dom::element e;
  if (parser.parse(it->second).get(e)) return {};
  std::string_view s;
  if (e.get_string().get(s)) return {};
  return std::string(s);
}

// A file name without the directories and the extensions PyTorch adds.
std::string short_name(std::string name) {
  const std::size_t slash = name.find_last_of('/');
  if (slash != std::string::npos) name.erase(0, slash + 1);
  for (bool again = true; again;) {
    again = false;
    for (std::string_view ext : {".gz", ".json", ".pt.trace", ".trace"}) {
      if (name.size() > ext.size() && name.ends_with(ext)) {
        name.resize(name.size() - ext.size());
        again = true;
      }
    }
  }
  return name;
}

// traceName is often a path ("./logs/run.pt.trace.json"): its short name; else the input file's.
std::string entrypoint_of(const Model& m, const trace_event::SourceInfo& src) {
  std::string entrypoint = short_name(top_level_string(m, "traceName"));
  if (entrypoint.empty()) entrypoint = short_name(src.file_name);
  if (entrypoint.empty()) entrypoint = "pytorch";
  return entrypoint;
}

// Flows, ignored categories, metadata, malformed events and clamped timestamps.
void count_unmapped(const Assembly& a, RepairCounts& rep) {
  const Model& m = *a.model;
  if (!m.flows.empty()) {
    std::unordered_map<std::int64_t, std::pair<std::uint64_t, std::uint64_t>> by_id;
    for (const Flow& f : m.flows) {
      auto& c = by_id[f.id ^ (static_cast<std::int64_t>(f.cat) << 40)];
      (f.ph == 's' ? c.first : c.second) += 1;
    }
    std::uint64_t lone_starts = 0, lone_ends = 0;
    for (const auto& [id, c] : by_id) {
      if (c.first > c.second) lone_starts += c.first - c.second;
      if (c.second > c.first) lone_ends += c.second - c.first;
    }
    rep["convert.flows_not_mapped"] = m.flows.size();
    rep["convert.unmatched_flow_starts"] = lone_starts;
    rep["convert.unmatched_flow_ends"] = lone_ends;
  }
  trace_event::add_ignored(rep, m.ignored);
  rep["convert.ignored.metadata"] = m.metadata_events;
  rep["convert.skipped_malformed_events"] = m.malformed_events;
  rep["convert.zeroed_negative_or_unreadable_durations"] = m.zeroed_durations;
  trace_event::add_bad_values(rep, m.bad_values);
  if (a.source->missing_array_end) rep["convert.repaired_missing_array_end"] = 1;
  std::uint64_t clamped_ts = 0;
  for (const PlacedOp& o : a.ops.ops) clamped_ts += o.ts < a.region.begin ? 1 : 0;
  rep["convert.clamped_timestamps_before_window"] = clamped_ts;
}

}  // namespace

bool PytorchImporter::recognizes(const InputHead& head) const {
  for (char c : head.bytes) {
    if (c == '{' || c == '[') return true;
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return false;
  }
  return false;
}

ImportedTrace PytorchImporter::read(const std::filesystem::path& path,
                                    const ImportOptions& options) const {
  const std::string name = path.string();
  trace_event::ScannedTrace scanned =
      trace_event::scan_trace_events(path, options.progress, options.threads);
  Model& m = scanned.model;
  // The conversion's line shows from its start: placing the events (a second for millions of
  // them) comes before the count that drives it.
  if (options.converting) options.converting(0, 1);
  scanned.source.format = scanned.source.bare_array ? kLegacyProfilerFormat : kKinetoFormat;
  RepairCounts rep;
  Assembly a;
  a.model = &m;
  a.source = &scanned.source;
  const EventLists lists = classify_events(m, name, rep);
  a.region = choose_region(m, lists, options.step, options.all_steps, name, rep);
  a.steps = step_records(m, lists);
  a.entrypoint = entrypoint_of(m, scanned.source);
  a.spans = plan_spans(m, lists, a.region, a.entrypoint, rep);
  a.ops = place_ops(m, lists, a.region, a.spans, rep);
  a.memory = place_memory(m, a.region, a.spans, rep);
  count_unmapped(a, rep);

  ImportReport report;
  report.format = scanned.source.format;
  report.measured = a.region.measured_name;
  report.source_events = m.events;
  report.repairs = trace_event::nonzero(rep);
  TraceDocumentBuilder out(name);
  emit_meta(a, report, out);
  emit_events(a, out, options.converting);
  return {out.finish(), std::move(report)};
}

}  // namespace candle_graph::import::pytorch
