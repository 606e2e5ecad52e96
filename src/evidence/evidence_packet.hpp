// trace6.md §9.1–9.2 EvidencePacket (candle-graph/evidence/1): provenance, health, findings, facts,
// gaps, graph, GPU evidence and the optional baseline comparison.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "candle_graph/analysis.hpp"
#include "device/device_time.hpp"
#include "device/gpu_analysis.hpp"
#include "evidence/capture_overhead.hpp"
#include "import/nsight/nsight_evidence.hpp"

namespace candle_graph::evidence {

inline constexpr std::string_view kEvidenceSchema = "candle-graph/evidence/1";

struct EvidenceFact {
  std::string code;
  std::string label;
  double value = 0;
  std::string unit;
  std::string source;
};

// Holds views into the document (through the graph); the document must outlive the packet.
struct EvidencePacket {
  const TraceDocument* doc = nullptr;  // provenance = doc->run()
  TraceHealth health;
  std::vector<std::string> findings;
  std::vector<EvidenceFact> facts;
  std::vector<std::string> gaps;
  ExecutionGraph graph;
  // Added: device work attached to the host ops and spans that launched it (empty without any).
  device::DeviceTime device;
  // Added: the GPU's own story from the trace's device work (member `gpu_trace`, omitted without
  // device work or host synchronizing calls).
  device::GpuAnalysis gpu_trace;
  import::nsight::NsightEvidence gpu;
  std::optional<Comparison> comparison;
  // Added: the capture's own cost as its meta tags state it (absent without those tags).
  std::optional<CaptureOverhead> capture_overhead;
};

// trace6.md §9.2 step 3: names of the spans of the measured subtree (measured span and descendants;
// the root envelope excluded), the keys the Nsight NVTX ranges are matched against.
std::vector<std::string> expected_semantic_keys(const TraceDocument& doc);

// trace6.md §9.2 step 5 `from_document`. Throws Error("trace is structurally untrusted: …").
EvidencePacket make_evidence_packet(const TraceDocument& doc, import::nsight::NsightEvidence gpu,
                                    std::optional<Comparison> comparison,
                                    const GraphOptions& options = {});

// trace6.md §9.3 plus the §17.6 and §17.8 lines.
std::string render_markdown(const EvidencePacket& packet);

}  // namespace candle_graph::evidence
