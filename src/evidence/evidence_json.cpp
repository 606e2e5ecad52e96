#include "evidence/evidence_json.hpp"
#include "evidence/gpu_trace_json.hpp"

#include "graph/graph_json.hpp"
#include "health/health_json.hpp"

namespace candle_graph::evidence {

using output::JsonStream;
using output::KeyOrder;
using output::write_object;

void write_provenance(JsonStream& w, const TraceRunMeta& run, KeyOrder order) {
  static constexpr std::array<std::string_view, 12> kKeys{
      "run_id",       "correlation_id", "entrypoint",
      "phase",        "timestamp",      "capture_step",
      "warmup_steps", "device",         "measured_region_device_synchronized",
      "timing_mode",  "tags",           "candle_version"};
  write_object(w, order, kKeys, [&](std::size_t f, std::string_view k) {
    if (f == 11) {  // omitted when absent
      if (run.candle_version) w.schema_key(k).string(*run.candle_version);
      return;
    }
    w.schema_key(k);
    switch (f) {
      case 0:
        w.string(run.run_id);
        break;
      case 1:
        w.string(run.correlation_id);
        break;
      case 2:
        w.string(run.entrypoint);
        break;
      case 3:
        w.string(to_string(run.phase));
        break;
      case 4:
        w.string(run.timestamp);
        break;
      case 5:
        w.u64(run.capture_step);
        break;
      case 6:
        w.u64(run.warmup_steps);
        break;
      case 7:
        w.string(run.device);
        break;
      case 8:
        w.boolean(run.measured_region_device_synchronized);
        break;
      case 9:
        w.string(to_string(run.timing_mode));
        break;
      default:
        w.begin_object();  // a map: sorted keys (the document keeps tags sorted)
        for (const Tag& t : run.tags) w.key(t.key).string(t.value);
        w.end_object();
        break;
    }
  });
}

void write_health(JsonStream& w, const TraceHealth& health, KeyOrder order) {
  write_health_json(w, health, order);
}

void write_comparison(JsonStream& w, const Comparison& c, KeyOrder order) {
  static constexpr std::array<std::string_view, 12> kKeys{"schema",
                                                          "baseline_run_id",
                                                          "candidate_run_id",
                                                          "comparable",
                                                          "warnings",
                                                          "total_delta_ns",
                                                          "total_delta_percent",
                                                          "baseline_peak_bytes",
                                                          "candidate_peak_bytes",
                                                          "peak_delta_bytes",
                                                          "spans",
                                                          "gradients"};
  static constexpr std::array<std::string_view, 9> kSpan{"name",
                                                         "baseline_count",
                                                         "candidate_count",
                                                         "baseline_total_ns",
                                                         "candidate_total_ns",
                                                         "baseline_mean_ns",
                                                         "candidate_mean_ns",
                                                         "delta_ns",
                                                         "delta_percent"};
  static constexpr std::array<std::string_view, 6> kGrad{"parameter",       "baseline_state",
                                                         "candidate_state", "baseline_norm",
                                                         "candidate_norm",  "norm_delta"};
  auto opt_f64 = [&](const std::optional<double>& v) { v ? w.f64(*v) : w.null(); };
  auto opt_state = [&](const std::optional<GradientState>& s) {
    s ? w.string(to_string(*s)) : w.null();
  };
  write_object(w, order, kKeys, [&](std::size_t f, std::string_view k) {
    w.schema_key(k);
    switch (f) {
      case 0:
        w.string(kComparisonSchema);
        break;
      case 1:
        w.string(c.baseline_run_id);
        break;
      case 2:
        w.string(c.candidate_run_id);
        break;
      case 3:
        w.boolean(c.comparable);
        break;
      case 4:
        w.begin_array();
        for (const std::string& s : c.warnings) w.string(s);
        w.end_array();
        break;
      case 5:
        w.i64(c.total_delta_ns);
        break;
      case 6:
        opt_f64(c.total_delta_percent);
        break;
      case 7:
        w.u64(c.baseline_peak_bytes);
        break;
      case 8:
        w.u64(c.candidate_peak_bytes);
        break;
      case 9:
        w.i64(c.peak_delta_bytes);
        break;
      case 10:
        w.begin_array();
        for (const SpanComparison& s : c.spans) {
          write_object(w, order, kSpan, [&](std::size_t g, std::string_view sk) {
            w.schema_key(sk);
            switch (g) {
              case 0:
                w.string(s.name);
                break;
              case 1:
                w.u64(s.baseline_count);
                break;
              case 2:
                w.u64(s.candidate_count);
                break;
              case 3:
                w.u64(s.baseline_total_ns);
                break;
              case 4:
                w.u64(s.candidate_total_ns);
                break;
              case 5:
                w.u64(s.baseline_mean_ns);
                break;
              case 6:
                w.u64(s.candidate_mean_ns);
                break;
              case 7:
                w.i64(s.delta_ns);
                break;
              default:
                opt_f64(s.delta_percent);
                break;
            }
          });
        }
        w.end_array();
        break;
      default:
        w.begin_array();
        for (const GradientComparison& g : c.gradients) {
          write_object(w, order, kGrad, [&](std::size_t h, std::string_view gk) {
            w.schema_key(gk);
            switch (h) {
              case 0:
                w.string(g.parameter);
                break;
              case 1:
                opt_state(g.baseline_state);
                break;
              case 2:
                opt_state(g.candidate_state);
                break;
              case 3:
                opt_f64(g.baseline_norm);
                break;
              case 4:
                opt_f64(g.candidate_norm);
                break;
              default:
                opt_f64(g.norm_delta);
                break;
            }
          });
        }
        w.end_array();
        break;
    }
  });
}

namespace {

void write_strings(JsonStream& w, const std::vector<std::string>& v) {
  w.begin_array();
  for (const std::string& s : v) w.string(s);
  w.end_array();
}

}  // namespace

void write_evidence_packet(JsonStream& w, const EvidencePacket& p) {
  const KeyOrder order = KeyOrder::declaration;
  static constexpr std::array<std::string_view, 10> kKeys{
      "schema", "provenance", "health", "findings",   "facts",
      "gaps",   "graph",      "gpu",    "comparison", "gpu_trace"};
  static constexpr std::array<std::string_view, 5> kFact{"code", "label", "value", "unit",
                                                         "source"};
  write_object(w, order, kKeys, [&](std::size_t f, std::string_view k) {
    if (f == 8) {  // omitted when there is no baseline
      if (p.comparison) write_comparison(w.schema_key(k), *p.comparison, order);
      return;
    }
    if (f == 9) {  // added, omitted when the trace recorded no device work and no host sync
      if (!p.gpu_trace.devices.empty() || p.gpu_trace.host_sync_ns > 0)
        write_gpu_trace(w.schema_key(k), p.gpu_trace, *p.doc);
      return;
    }
    w.schema_key(k);
    switch (f) {
      case 0:
        w.string(kEvidenceSchema);
        break;
      case 1:
        write_provenance(w, p.doc->run(), order);
        break;
      case 2:
        write_health(w, p.health, order);
        break;
      case 3:
        write_strings(w, p.findings);
        break;
      case 4:
        w.begin_array();
        for (const EvidenceFact& fact : p.facts) {
          write_object(w, order, kFact, [&](std::size_t g, std::string_view fk) {
            w.schema_key(fk);
            if (g == 0) w.string(fact.code);
            if (g == 1) w.string(fact.label);
            if (g == 2) w.f64(fact.value);
            if (g == 3) w.string(fact.unit);
            if (g == 4) w.string(fact.source);
          });
        }
        w.end_array();
        break;
      case 5:
        write_strings(w, p.gaps);
        break;
      case 6:
        graph::write_graph(w, p.graph, order);
        break;
      default:
        import::nsight::write_nsight_json(w, p.gpu, order);
        break;
    }
  });
}

std::uint64_t evidence_packet_elements(const EvidencePacket& p) {
  return p.graph.nodes.size() + p.graph.edges.size() + p.graph.memory.timeline.size();
}

void write_summary_document(JsonStream& w, const EvidencePacket& p) {
  const KeyOrder order = KeyOrder::sorted;  // trace6.md §17.1: the original built it with json!
  w.begin_object();
  write_strings(w.key("findings"), p.findings);
  write_strings(w.key("gaps"), p.gaps);
  write_health(w.key("health"), p.health, order);
  write_provenance(w.key("provenance"), p.doc->run(), order);
  w.key("schema").string(kSummarySchema);
  graph::write_graph_summary(w.key("summary"), p.graph, order);
  w.end_object();
}

}  // namespace candle_graph::evidence
