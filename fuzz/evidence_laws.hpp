// The numbers of an evidence packet that must add up, whatever the trace (docs/format/pytorch.md,
// gpu-analyses): no node's self time above its total; device time attributed to ops or counted
// as unattributed, never lost, and no op's or span's own device time above its total; no point
// of the memory timeline above the peak, no more frees than allocations (health refuses an
// unpaired free); per device, busy and idle time make the window, the idle time's causes make
// the idle time, the kernel types (with their overlaps) make the busy time, each class of work
// and each stream lies within it, the communication hidden by compute within both, and the
// launch delays' percentiles are ordered.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "device/gpu_analysis.hpp"
#include "evidence/evidence_packet.hpp"
#include "fuzz_support.hpp"

namespace candle_graph::fuzz {

inline void check_evidence_laws(const evidence::EvidencePacket& p) {
  for (const GraphNode& n : p.graph.nodes)
    law(n.self_time_ns <= n.total_time_ns, "a node's self time exceeds its total", n.self_time_ns,
        n.total_time_ns);
  const MemoryProfile& memory = p.graph.memory;
  for (const MemoryTimelinePoint& point : memory.timeline)
    law(point.live_bytes <= memory.summary.peak_bytes, "live memory exceeds the peak",
        point.live_bytes, memory.summary.peak_bytes);
  law(memory.summary.free_count <= memory.summary.alloc_count,
      "more frees than allocations in a trusted trace", memory.summary.free_count,
      memory.summary.alloc_count);
  // Device time is attributed, never lost: Σ op self + unattributed = all device work.
  const device::DeviceTime& dt = p.device;
  std::uint64_t attributed = 0;
  for (std::size_t i = 0; i < dt.op_self_ns.size(); ++i) {
    attributed += dt.op_self_ns[i];
    law(dt.op_self_ns[i] <= dt.op_total_ns[i], "an op's own device time exceeds its total",
        dt.op_self_ns[i], dt.op_total_ns[i]);
  }
  if (!dt.op_self_ns.empty())
    law(attributed + dt.unattributed_ns == dt.device_ns,
        "attributed and unattributed device time do not make the device time",
        attributed + dt.unattributed_ns, dt.device_ns);
  for (std::size_t i = 0; i < dt.span_self_ns.size(); ++i)
    law(dt.span_self_ns[i] <= dt.span_total_ns[i], "a span's own device time exceeds its total",
        dt.span_self_ns[i], dt.span_total_ns[i]);
  for (const device::DeviceGpu& d : p.gpu_trace.devices) {
    law(d.busy_ns + d.idle_ns == d.window_ns, "busy and idle do not make the window",
        d.busy_ns + d.idle_ns, d.window_ns);
    const std::uint64_t causes = d.idle_host_wait_ns + d.idle_kernel_wait_ns + d.idle_other_ns;
    law(causes == d.idle_ns, "the idle time's causes do not make it", causes, d.idle_ns);
    std::uint64_t typed = 0;
    for (const device::KernelTypeTime& t : d.kernel_types) typed += t.ns;
    law(typed == d.busy_ns, "the kernel types do not make the busy time", typed, d.busy_ns);
    for (std::uint64_t part : {d.compute_ns, d.communication_ns, d.memory_ns})
      law(part <= d.busy_ns, "a class of work exceeds the busy time", part, d.busy_ns);
    for (const device::StreamIdle& s : d.streams)
      law(s.busy_ns <= d.busy_ns, "a stream is busier than its device", s.busy_ns, d.busy_ns);
    law(d.comm_compute_overlap_ns <= std::min(d.compute_ns, d.communication_ns),
        "hidden communication exceeds the compute or the communication", d.comm_compute_overlap_ns,
        std::min(d.compute_ns, d.communication_ns));
    const device::LaunchStats& l = d.launches;
    law(l.p50_delay_ns <= l.p95_delay_ns && l.p95_delay_ns <= l.max_delay_ns &&
            l.mean_delay_ns <= l.max_delay_ns,
        "the launch delays' percentiles are out of order", l.p50_delay_ns, l.max_delay_ns);
  }
}

}  // namespace candle_graph::fuzz
