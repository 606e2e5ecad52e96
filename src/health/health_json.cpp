#include "health/health_json.hpp"

namespace candle_graph {

using output::KeyOrder;
using output::write_object;

void write_coverage_json(output::JsonStream& w, const EvidenceCoverage& c, KeyOrder order) {
  static constexpr std::array<std::string_view, 13> kKeys = {
      "spans",          "closed_spans", "root_spans",    "measured_spans",
      "operations",     "tensors",      "memory_events", "device_memory_samples",
      "gradients",      "edges",        "forward_spans", "backward_spans",
      "optimizer_spans"};
  const std::array<std::uint64_t, 13> values = {
      c.spans,          c.closed_spans, c.root_spans,    c.measured_spans,
      c.operations,     c.tensors,      c.memory_events, c.device_memory_samples,
      c.gradients,      c.edges,        c.forward_spans, c.backward_spans,
      c.optimizer_spans};
  write_object(w, order, kKeys,
               [&](std::size_t i, std::string_view key) { w.schema_key(key).u64(values[i]); });
}

void write_health_json(output::JsonStream& w, const TraceHealth& h, KeyOrder order) {
  static constexpr std::array<std::string_view, 3> kKeys = {"trusted", "issues", "coverage"};
  static constexpr std::array<std::string_view, 3> kIssueKeys = {"severity", "code", "message"};
  write_object(w, order, kKeys, [&](std::size_t i, std::string_view key) {
    w.schema_key(key);
    switch (i) {
      case 0:
        w.boolean(h.trusted);
        break;
      case 1:
        w.begin_array();
        for (const HealthIssue& issue : h.issues) {
          write_object(w, order, kIssueKeys, [&](std::size_t k, std::string_view issue_key) {
            w.schema_key(issue_key);
            if (k == 0) w.string(to_string(issue.severity));
            if (k == 1) w.string(issue.code);
            if (k == 2) w.string(issue.message);
          });
        }
        w.end_array();
        break;
      default:
        write_coverage_json(w, h.coverage, order);
        break;
    }
  });
}

}  // namespace candle_graph
