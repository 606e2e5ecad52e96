#include "health/health_json.hpp"

namespace candle_graph {

output::OrderedJson coverage_to_json(const EvidenceCoverage& c) {
  output::OrderedJson j = output::OrderedJson::object();
  j["spans"] = c.spans;
  j["closed_spans"] = c.closed_spans;
  j["root_spans"] = c.root_spans;
  j["measured_spans"] = c.measured_spans;
  j["operations"] = c.operations;
  j["tensors"] = c.tensors;
  j["memory_events"] = c.memory_events;
  j["device_memory_samples"] = c.device_memory_samples;
  j["gradients"] = c.gradients;
  j["edges"] = c.edges;
  j["forward_spans"] = c.forward_spans;
  j["backward_spans"] = c.backward_spans;
  j["optimizer_spans"] = c.optimizer_spans;
  return j;
}

output::OrderedJson health_to_json(const TraceHealth& h) {
  output::OrderedJson issues = output::OrderedJson::array();
  for (const HealthIssue& i : h.issues) {
    output::OrderedJson j = output::OrderedJson::object();
    j["severity"] = to_string(i.severity);
    j["code"] = i.code;
    j["message"] = i.message;
    issues.push_back(std::move(j));
  }
  output::OrderedJson j = output::OrderedJson::object();
  j["trusted"] = h.trusted;
  j["issues"] = std::move(issues);
  j["coverage"] = coverage_to_json(h.coverage);
  return j;
}

}  // namespace candle_graph
