// The report's sections about what the trace itself recorded of the devices and of the profiler's
// steps (PyTorch traces): device work ranked against device time, never against host time, with
// kernel names demangled; the ops that launched it; and each step's wall and device busy time.
#pragma once

#include <string>

#include "evidence/evidence_packet.hpp"

namespace candle_graph::evidence {

struct DeviceSectionLimits {
  std::size_t kernels = 10;
  std::size_t ops = 10;
  std::size_t steps = 20;
  std::size_t sync_stalls = 5;
};

// `## GPU from the trace` when the trace holds device work, else nothing: per device busy and idle
// time and why, kernel types, launches and host sync stalls, then the kernels and the ops that
// launched them.
void device_time_section(std::string& md, const EvidencePacket& p,
                         const DeviceSectionLimits& limits = {});

// `## Profiler steps` when the trace was imported from a profiler with steps, else nothing.
void profiler_steps_section(std::string& md, const EvidencePacket& p,
                            const DeviceSectionLimits& limits = {});

}  // namespace candle_graph::evidence
