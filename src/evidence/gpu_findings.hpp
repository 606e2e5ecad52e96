// Findings that explain the GPU analysis of a trace (device/gpu_analysis.hpp) in words: each names
// its numbers and the rule that produced it, e.g. "GPU cuda:0 idle 74.2% of its 12.3 ms window;
// 65% of the streams' idle time the host had not yet launched the next work (…)".
#pragma once

#include <string>
#include <vector>

#include "device/gpu_analysis.hpp"

namespace candle_graph::evidence {

// Thresholds of the rules, in shares of the quantity each names.
struct GpuFindingRules {
  double idle_share = 0.10;      // a device idle at least this share of its window
  double sync_share = 0.05;      // the host blocked in one call in one span at least this share
  double comm_busy_share = 0.0;  // communication present at all
};

std::vector<std::string> gpu_findings(const device::GpuAnalysis& a, const TraceDocument& doc,
                                      std::uint64_t measured_total_ns,
                                      const GpuFindingRules& rules = {});

}  // namespace candle_graph::evidence
