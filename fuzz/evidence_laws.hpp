// The numbers of an evidence packet that must add up, whatever the trace (docs/format/pytorch.md,
// gpu-analyses). Worked out here from the document, apart from the analyses: on a thread whose
// host ops never cross, their own times sum to the time they cover (each instant once); one GPU
// entry per device that ran work, in the devices' name order, whose busy time is the length of
// the union of its work's intervals and whose sync time is the sum of its syncs; one memory
// timeline point per memory event, one memory entry per device counting its allocations and
// frees, each device's memory peak its highest point and the global peak the highest of all.
// Within the packet: no node's self time above its total; device time attributed to ops or
// counted as unattributed, never lost, and no op's or span's own device time above its total; no
// point of the memory timeline above the peak, no more frees than allocations (health refuses an
// unpaired free); per device, busy and idle time make the window, the idle time's causes make the
// idle time, the kernel types (with their overlaps) make the busy time, each class of work and each
// stream lies within it, the communication hidden by compute within both, and the launch delays'
// percentiles are ordered.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "device/gpu_analysis.hpp"
#include "events/saturating.hpp"
#include "evidence/evidence_packet.hpp"
#include "fuzz_support.hpp"

namespace candle_graph::fuzz {

// The document's device work, per device: each kernel's, memcpy's and memset's [start, end)
// (the end saturating), and the sum of its syncs' durations (saturating).
struct DeviceWorkReference {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> intervals;
  std::uint64_t sync_ns = 0;
};

inline std::map<std::string, DeviceWorkReference> device_work_reference(const TraceDocument& doc) {
  std::map<std::string, DeviceWorkReference> devices;
  for (const OpEvent& w : doc.device_ops()) {
    DeviceWorkReference& d = devices[std::string(w.device)];
    const std::uint64_t ns = w.total_ns.value_or(w.duration_ns);
    if (w.op_kind == OpKind::sync)
      d.sync_ns = sat_add(d.sync_ns, ns);
    else
      d.intervals.emplace_back(w.timestamp_ns, sat_add(w.timestamp_ns, ns));
  }
  return devices;
}

// The length of time covered by at least one interval: sorted by start, each adds what it reaches
// past the furthest end so far.
inline std::uint64_t covered_time(std::vector<std::pair<std::uint64_t, std::uint64_t>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::uint64_t covered = 0, reached = 0;
  for (const auto& [start, end] : intervals) {
    const std::uint64_t from = std::max(start, reached);
    if (end > from) covered += end - from;
    reached = std::max(reached, end);
  }
  return covered;
}

// Each device's entry against the document's own work (above).
inline void check_devices_against_document(const TraceDocument& doc,
                                           const std::vector<device::DeviceGpu>& gpus) {
  const std::map<std::string, DeviceWorkReference> expected = device_work_reference(doc);
  law(gpus.size() == expected.size(), "the GPU analysis has not one entry per device", gpus.size(),
      expected.size());
  auto want = expected.begin();
  for (const device::DeviceGpu& d : gpus) {
    if (d.device != want->first)
      fail("the GPU analysis's devices are not the document's", d.device);
    law(d.busy_ns == covered_time(want->second.intervals),
        "a device's busy time is not the union of its work", d.busy_ns,
        covered_time(want->second.intervals));
    law(d.sync_ns == want->second.sync_ns, "a device's sync time is not the sum of its syncs",
        d.sync_ns, want->second.sync_ns);
    ++want;
  }
}

// Whether two of a thread's host ops cross (one starts inside the other and ends after it),
// sorted by start: each op is held against the ops that start before it ends. Threads of more
// than 4,000 ops are not judged (quadratic at worst) and count as crossing.
inline bool any_crossing(std::vector<std::pair<std::uint64_t, std::uint64_t>> ops) {
  if (ops.size() > 4000) return true;
  std::sort(ops.begin(), ops.end());
  for (std::size_t i = 0; i < ops.size(); ++i)
    for (std::size_t j = i + 1; j < ops.size() && ops[j].first < ops[i].second; ++j)
      if (ops[j].first > ops[i].first && ops[j].second > ops[i].second) return true;
  return false;
}

// Host ops that never cross on a thread nest into a forest, and their own (exclusive) times then
// tile the time the thread's ops cover, each instant counted once: Σ self = the length of the
// union of their extents. Worked out per thread (an op without one is on thread 0, as nesting
// reads it) from the document; nested time counted twice shows as a sum above the union.
inline void check_host_self_times(const TraceDocument& doc, const std::vector<GraphNode>& nodes) {
  std::map<std::uint64_t, std::vector<std::pair<std::uint64_t, std::uint64_t>>> extents;
  for (const OpEvent& op : doc.ops())
    extents[op.lane.value_or(0)].emplace_back(
        op.timestamp_ns, sat_add(op.timestamp_ns, op.total_ns.value_or(op.duration_ns)));
  std::map<std::uint64_t, std::uint64_t> self_by_thread;
  for (const GraphNode& n : nodes)
    if (n.is_op_node()) {
      std::uint64_t& sum = self_by_thread[doc.ops()[n.op].lane.value_or(0)];
      sum = sat_add(sum, n.self_time_ns);
    }
  for (const auto& [thread, ops] : extents) {
    if (any_crossing(ops)) continue;
    const std::uint64_t covered = covered_time(ops);
    law(self_by_thread[thread] == covered,
        "the host ops' own times on a thread do not tile the time they cover",
        self_by_thread[thread], covered);
  }
}

// The memory profile against the document's memory events (trace6.md §7.1): one timeline point
// per event; one device entry per device with events, in name order, counting its allocations and
// frees; each device's peak the highest of its timeline points, the global peak the highest
// point of all.
inline void check_memory_against_document(const TraceDocument& doc, const MemoryProfile& m) {
  struct Counts {
    std::uint64_t allocs = 0, frees = 0, peak = 0;
  };
  std::map<std::string, Counts> devices;
  for (const MemoryEvent& e : doc.memory())
    ++(e.action == MemoryAction::alloc ? devices[std::string(e.device)].allocs
                                       : devices[std::string(e.device)].frees);
  law(m.timeline.size() == doc.memory().size(), "the memory timeline has not one point per event",
      m.timeline.size(), doc.memory().size());
  std::uint64_t highest = 0;
  for (const MemoryTimelinePoint& point : m.timeline) {
    Counts& d = devices[std::string(point.device)];
    d.peak = std::max(d.peak, point.live_bytes);
    highest = std::max(highest, point.live_bytes);
  }
  law(m.summary.peak_bytes == highest, "the peak is not the highest point of the timeline",
      m.summary.peak_bytes, highest);
  law(m.by_device.size() == devices.size(), "the memory profile has not one entry per device",
      m.by_device.size(), devices.size());
  auto want = devices.begin();
  for (const DeviceMemoryStats& d : m.by_device) {
    if (d.device != want->first)
      fail("the memory profile's devices are not the document's", d.device);
    law(d.alloc_count == want->second.allocs && d.free_count == want->second.frees,
        "a device's allocations or frees are not its events'", d.alloc_count, want->second.allocs);
    law(d.peak_bytes == want->second.peak, "a device's peak is not its highest point", d.peak_bytes,
        want->second.peak);
    ++want;
  }
}

inline void check_evidence_laws(const TraceDocument& doc, const evidence::EvidencePacket& p) {
  check_memory_against_document(doc, p.graph.memory);
  check_devices_against_document(doc, p.gpu_trace.devices);
  check_host_self_times(doc, p.graph.nodes);
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
