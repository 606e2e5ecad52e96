#include "evidence/evidence_packet.hpp"

#include <cmath>
#include <cstdio>

#include "evidence/gpu_findings.hpp"
#include "graph/graph_builder.hpp"
#include "output/markdown_text.hpp"

namespace candle_graph::evidence {
namespace {

// Rust's `{:.2}`: glibc's correctly rounded %.2f gives the same digits (trace6.md §9.5).
std::string fixed2(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// Added after the original's facts (trace6.md §9.2 lists those): the capture's estimated cost and
// its share of the measured total, both from the meta tags (libtorch.md §4.1).
void add_capture_overhead_facts(std::vector<EvidenceFact>& facts, const CaptureOverhead& o) {
  facts.push_back({"capture_overhead", "Estimated capture overhead",
                   static_cast<double>(o.estimate_ns) / 1e6, "ms", "meta_tags"});
  facts.push_back({"capture_overhead_share", "Capture overhead share of the measured total",
                   o.share * 100.0, "%", "meta_tags"});
}

}  // namespace

std::vector<std::string> expected_semantic_keys(const TraceDocument& doc) {
  std::vector<std::string> keys;
  for (std::uint32_t s : measured_subtree(doc)) keys.emplace_back(doc.spans()[s].name);
  return keys;
}

EvidencePacket make_evidence_packet(const TraceDocument& doc, import::nsight::NsightEvidence gpu,
                                    std::optional<Comparison> comparison,
                                    const GraphOptions& options) {
  EvidencePacket p;
  p.doc = &doc;
  // The graph's memory replay needs nothing the health checks find: with threads it starts
  // first and runs beside them (an untrusted trace gets no graph, and its replay is dropped).
  std::future<MemoryProfile> memory = graph::start_memory_replay(doc, options);
  p.health = analyze_health(doc, options.threads);
  p.graph = graph::build_from_trace(doc, p.health, options, std::move(memory));
  // The graph nested the host ops already (its op nodes' parent_op): no second nesting pass.
  std::vector<std::uint32_t> op_parent(doc.ops().size(), kNoIndex);
  const std::size_t n_spans = doc.spans().size();
  for (std::size_t k = 0; k < op_parent.size(); ++k)
    if (const std::uint32_t node = p.graph.nodes[n_spans + k].parent_op; node != kNoIndex)
      op_parent[k] = static_cast<std::uint32_t>(node - n_spans);
  p.device = device::attribute_device_time(doc, op_parent);
  p.gpu_trace = device::analyze_gpu(doc);
  p.gpu = std::move(gpu);
  p.comparison = std::move(comparison);
  const ExecutionGraph& g = p.graph;

  // trace6.md §9.2 findings: the five slowest spans, the gradient tally, the top GPU kernel.
  const auto& slowest = g.summary.slowest_spans;
  for (std::size_t i = 0; i < slowest.size() && i < 5; ++i) {
    const double self_ms = static_cast<double>(g.nodes[slowest[i]].self_time_ns) / 1e6;
    p.findings.push_back(std::string(g.name(slowest[i])) + ": " + fixed2(self_ms) +
                         " ms self time");
  }
  if (!doc.gradients().empty()) {
    std::size_t attention = 0;
    for (const GradientEvent& e : doc.gradients()) attention += e.state != GradientState::present;
    p.findings.push_back(std::to_string(doc.gradients().size()) + " gradient facts captured; " +
                         std::to_string(attention) + " require attention");
  }
  if (p.gpu.status == import::nsight::GpuEvidenceStatus::available && !p.gpu.kernels.empty()) {
    const auto& k = p.gpu.kernels.front();
    p.findings.push_back("top GPU kernel " + output::quoted_code(k.name) + ": " +
                         fixed2(static_cast<double>(k.total_ns) / 1e6) + " ms total");
  }
  // Added: what the trace's own device work says, each finding with its rule.
  for (std::string& f : gpu_findings(
           p.gpu_trace, doc, static_cast<std::uint64_t>(std::llround(g.summary.total_ms * 1e6))))
    p.findings.push_back(std::move(f));

  // trace6.md §9.2 facts: the measured total, then the eight slowest spans' self times.
  p.facts.push_back(
      {"measured_total", "Measured update total", g.summary.total_ms, "ms", "measured_span"});
  for (std::size_t i = 0; i < slowest.size() && i < 8; ++i) {
    const std::uint32_t n = slowest[i];
    p.facts.push_back({"span_self_time", std::string(g.name(n)),
                       static_cast<double>(g.nodes[n].self_time_ns), "ns", g.node_id(n).str()});
  }
  p.capture_overhead = read_capture_overhead(doc, g.summary.total_ms);
  if (p.capture_overhead) add_capture_overhead_facts(p.facts, *p.capture_overhead);

  // trace6.md §9.2 gaps: health warnings, then why there is no GPU evidence.
  p.gaps = p.health.gaps();
  if (p.gpu.status != import::nsight::GpuEvidenceStatus::available)
    p.gaps.push_back(p.gpu.reason ? *p.gpu.reason : "GPU evidence is unavailable");
  if (p.capture_overhead)
    if (auto gap = capture_overhead_gap(*p.capture_overhead)) p.gaps.push_back(std::move(*gap));
  return p;
}

}  // namespace candle_graph::evidence
