#include "device/gpu_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <unordered_map>

#include "device/device_time.hpp"
#include "events/saturating.hpp"
#include "trace/time_intervals.hpp"

namespace candle_graph::device {
namespace {

std::uint64_t end_of(std::uint64_t start, std::uint64_t duration) noexcept {
  return start + duration < start ? UINT64_MAX : start + duration;
}

TimeInterval interval_of(const OpEvent& work) {
  return {work.timestamp_ns, end_of(work.timestamp_ns, device_duration(work))};
}

// The runtime call (index into doc.ops()) of each correlation id.
std::unordered_map<std::uint64_t, std::uint32_t> calls_by_correlation(const TraceDocument& doc) {
  std::unordered_map<std::uint64_t, std::uint32_t> calls;
  for (std::uint32_t i = 0; i < doc.ops().size(); ++i) {
    const OpEvent& op = doc.ops()[i];
    if (op.op_kind == OpKind::runtime && op.correlation) calls.try_emplace(*op.correlation, i);
  }
  return calls;
}

// The segments of the sweep over the three classes' unions, labelled by the classes active in
// them (pytorch.md §G3): "COMPUTATION" is compute-only time.
std::vector<KernelTypeTime> kernel_type_table(const std::vector<TimeInterval> (&by_class)[3]) {
  static constexpr const char* kNames[3] = {"COMPUTATION", "COMMUNICATION", "MEMORY"};
  std::vector<std::pair<std::uint64_t, int>> points;  // (time, +bit on start / -bit on end)
  for (int c = 0; c < 3; ++c)
    for (const TimeInterval& i : by_class[c]) {
      points.emplace_back(i.first, 1 << c);
      points.emplace_back(i.second, -(1 << c));
    }
  std::sort(points.begin(), points.end());
  std::map<int, std::uint64_t> by_mask;
  int mask = 0;
  for (std::size_t k = 0; k < points.size(); ++k) {
    mask += points[k].second;
    if (k + 1 < points.size() && mask != 0 && points[k + 1].first > points[k].first)
      by_mask[mask] = sat_add(by_mask[mask], points[k + 1].first - points[k].first);
  }
  std::vector<KernelTypeTime> out;
  for (const auto& [m, ns] : by_mask) {
    std::string label;
    for (int c = 0; c < 3; ++c)
      if (m & (1 << c)) label += (label.empty() ? "" : " overlapping ") + std::string(kNames[c]);
    out.push_back({label, ns});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const KernelTypeTime& a, const KernelTypeTime& b) { return a.ns > b.ns; });
  return out;
}

enum class GapCause { host_wait, kernel_wait, other };

// Why the device (or a stream) was idle from `idle_since` until `work` started (pytorch.md §G4):
// the host had not begun the launch call yet, or the gap was a short one between kernels, or other.
GapCause gap_cause(const TraceDocument& doc, const OpEvent& work, std::uint64_t idle_since,
                   const std::unordered_map<std::uint64_t, std::uint32_t>& calls,
                   const GpuOptions& options) {
  const auto call = work.correlation ? calls.find(*work.correlation) : calls.end();
  if (call != calls.end() && doc.ops()[call->second].timestamp_ns > idle_since)
    return GapCause::host_wait;
  return work.timestamp_ns - idle_since < options.kernel_wait_ns ? GapCause::kernel_wait
                                                                 : GapCause::other;
}

// Adds the idle gaps of `items` (device work, sorted by start) to host, kernel and other, each
// gap measured from the latest end so far. Work of no duration is no busy time: it neither ends
// a gap nor starts the window (merge_intervals drops it too), so the gaps add up to the window
// less the busy time even when such work comes first or last.
void add_gaps(const TraceDocument& doc, const std::vector<std::uint32_t>& items,
              const std::unordered_map<std::uint64_t, std::uint32_t>& calls,
              const GpuOptions& options, std::uint64_t (&by_cause)[3]) {
  std::optional<std::uint64_t> reach;
  for (std::uint32_t item : items) {
    const OpEvent& w = doc.device_ops()[item];
    const TimeInterval iv = interval_of(w);
    if (iv.second <= iv.first) continue;
    if (reach && iv.first > *reach) {
      const auto cause = static_cast<int>(gap_cause(doc, w, *reach, calls, options));
      by_cause[cause] = sat_add(by_cause[cause], iv.first - *reach);
    }
    reach = reach ? std::max(*reach, iv.second) : iv.second;
  }
}

std::vector<std::uint32_t> by_start(const TraceDocument& doc, std::vector<std::uint32_t> items) {
  std::stable_sort(items.begin(), items.end(), [&](std::uint32_t a, std::uint32_t b) {
    return doc.device_ops()[a].timestamp_ns < doc.device_ops()[b].timestamp_ns;
  });
  return items;
}

// Per stream: busy time, and each idle gap (measured from the latest end so far, so never
// negative) split by its cause (pytorch.md §G4 with correction 6).
std::vector<StreamIdle> stream_idle(const TraceDocument& doc,
                                    const std::vector<std::uint32_t>& work,
                                    const std::unordered_map<std::uint64_t, std::uint32_t>& calls,
                                    const GpuOptions& options) {
  std::map<std::uint64_t, std::vector<std::uint32_t>> by_stream;
  for (std::uint32_t k : work) by_stream[doc.device_ops()[k].lane.value_or(0)].push_back(k);
  std::vector<StreamIdle> out;
  for (auto& [stream, items] : by_stream) {
    const std::vector<std::uint32_t> sorted = by_start(doc, std::move(items));
    StreamIdle s;
    s.stream = stream;
    std::uint64_t by_cause[3] = {0, 0, 0};
    add_gaps(doc, sorted, calls, options, by_cause);
    s.host_wait_ns = by_cause[0];
    s.kernel_wait_ns = by_cause[1];
    s.other_wait_ns = by_cause[2];
    std::vector<TimeInterval> intervals;
    intervals.reserve(sorted.size());
    for (std::uint32_t k : sorted) intervals.push_back(interval_of(doc.device_ops()[k]));
    s.busy_ns = covered_length(merge_intervals(std::move(intervals)));
    out.push_back(s);
  }
  return out;
}

std::uint64_t nearest_rank(const std::vector<std::uint64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto rank =
      static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

// Launch delay = work start − end of its launch call, clipped at 0 (pytorch.md §G6), for every
// launch call that has a correlation (correction 4: any runtime, ROCm and driver calls included).
LaunchStats launch_stats(const TraceDocument& doc, const std::vector<std::uint32_t>& work,
                         const std::unordered_map<std::uint64_t, std::uint32_t>& calls,
                         const GpuOptions& options) {
  LaunchStats l;
  std::vector<std::uint64_t> delays;
  long double sum = 0;
  for (std::uint32_t k : work) {
    const OpEvent& w = doc.device_ops()[k];
    const auto call = w.correlation ? calls.find(*w.correlation) : calls.end();
    if (call == calls.end()) continue;
    const OpEvent& c = doc.ops()[call->second];
    const std::uint64_t cpu = c.total_ns.value_or(c.duration_ns);
    const std::uint64_t call_end = end_of(c.timestamp_ns, cpu);
    const std::uint64_t delay = w.timestamp_ns > call_end ? w.timestamp_ns - call_end : 0;
    ++l.count;
    delays.push_back(delay);
    sum += delay;
    l.short_kernels += cpu <= options.runtime_cutoff_ns && device_duration(w) < cpu;
    l.runtime_outliers += cpu > options.runtime_cutoff_ns;
    l.delay_outliers += delay > options.delay_cutoff_ns;
  }
  if (delays.empty()) return l;
  std::sort(delays.begin(), delays.end());
  l.mean_delay_ns = static_cast<std::uint64_t>(sum / static_cast<long double>(delays.size()));
  l.p50_delay_ns = nearest_rank(delays, 50);
  l.p95_delay_ns = nearest_rank(delays, 95);
  l.max_delay_ns = delays.back();
  return l;
}

DeviceGpu analyze_device(const TraceDocument& doc, std::string_view device,
                         const std::vector<std::uint32_t>& work,
                         const std::vector<std::uint32_t>& syncs,
                         const std::unordered_map<std::uint64_t, std::uint32_t>& calls,
                         const GpuOptions& options) {
  DeviceGpu d;
  d.device = device;
  std::vector<TimeInterval> all, by_class[3];
  for (std::uint32_t k : work) {
    const TimeInterval iv = interval_of(doc.device_ops()[k]);
    all.push_back(iv);
    by_class[static_cast<int>(classify(doc.device_ops()[k]))].push_back(iv);
  }
  for (std::uint32_t k : syncs)
    d.sync_ns = sat_add(d.sync_ns, device_duration(doc.device_ops()[k]));
  const std::vector<TimeInterval> busy = merge_intervals(std::move(all));
  if (!busy.empty()) {
    d.window_begin_ns = busy.front().first;
    d.window_ns = busy.back().second - busy.front().first;
  }
  d.busy_ns = covered_length(busy);
  d.idle_ns = d.window_ns - d.busy_ns;
  std::uint64_t by_cause[3] = {0, 0, 0};
  add_gaps(doc, by_start(doc, work), calls, options, by_cause);
  d.idle_host_wait_ns = by_cause[0];
  d.idle_kernel_wait_ns = by_cause[1];
  d.idle_other_ns = by_cause[2];
  for (auto& c : by_class) c = merge_intervals(std::move(c));
  d.compute_ns = covered_length(by_class[0]);
  d.communication_ns = covered_length(by_class[1]);
  d.memory_ns = covered_length(by_class[2]);
  d.kernel_types = kernel_type_table(by_class);
  d.streams = stream_idle(doc, work, calls, options);
  d.comm_compute_overlap_ns = overlap_length(by_class[1], by_class[0]);
  if (d.communication_ns > 0)
    d.comm_compute_overlap =
        static_cast<double>(d.comm_compute_overlap_ns) / static_cast<double>(d.communication_ns);
  d.launches = launch_stats(doc, work, calls, options);
  return d;
}

// Host synchronizing calls: per span, and per device (the device of a device-side sync row with
// the call's correlation, else `fallback`).
void add_sync_stalls(const TraceDocument& doc, GpuAnalysis& a) {
  std::unordered_map<std::uint64_t, std::string_view> device_of_sync;
  for (const OpEvent& w : doc.device_ops())
    if (w.op_kind == OpKind::sync && w.correlation)
      device_of_sync.try_emplace(*w.correlation, w.device);
  std::map<std::pair<std::string_view, std::string_view>, SyncStall> per_device;
  std::map<std::pair<std::uint32_t, std::string_view>, SpanSyncStall> per_span;
  const std::string_view fallback =
      a.devices.empty() ? std::string_view() : a.devices.front().device;
  for (std::uint32_t i = 0; i < doc.ops().size(); ++i) {
    const OpEvent& op = doc.ops()[i];
    if (op.op_kind != OpKind::runtime || !is_synchronizing_call(op.op_name)) continue;
    const std::uint64_t ns = op.total_ns.value_or(op.duration_ns);
    a.host_sync_ns = sat_add(a.host_sync_ns, ns);
    const auto dev = op.correlation ? device_of_sync.find(*op.correlation) : device_of_sync.end();
    SyncStall& s = per_device[{dev != device_of_sync.end() ? dev->second : fallback, op.op_name}];
    s.call = op.op_name;
    s.ns = sat_add(s.ns, ns);
    ++s.count;
    if (doc.op_span()[i] == kNoIndex) continue;
    SpanSyncStall& p = per_span[{doc.op_span()[i], op.op_name}];
    p.span = doc.op_span()[i];
    p.call = op.op_name;
    p.ns = sat_add(p.ns, ns);
    ++p.count;
  }
  for (DeviceGpu& d : a.devices) {
    for (const auto& [key, stall] : per_device)
      if (key.first == d.device) d.sync_stalls.push_back(stall);
    std::stable_sort(d.sync_stalls.begin(), d.sync_stalls.end(),
                     [](const SyncStall& x, const SyncStall& y) { return x.ns > y.ns; });
  }
  for (const auto& [key, stall] : per_span) a.span_sync_stalls.push_back(stall);
  std::stable_sort(a.span_sync_stalls.begin(), a.span_sync_stalls.end(),
                   [](const SpanSyncStall& x, const SpanSyncStall& y) { return x.ns > y.ns; });
}

}  // namespace

bool is_communication_kernel(std::string_view name) {
  for (std::string_view prefix : {"nccl", "rccl", "hccl"})
    if (name.starts_with(prefix)) return true;
  return name.find("ncclKernel") != std::string_view::npos ||
         name.find("ncclDevKernel") != std::string_view::npos;
}

WorkClass classify(const OpEvent& work) {
  if (work.op_kind == OpKind::memcpy || work.op_kind == OpKind::memset) return WorkClass::memory;
  return is_communication_kernel(work.op_name) ? WorkClass::communication : WorkClass::computation;
}

bool is_synchronizing_call(std::string_view name) {
  if (name.find("Synchronize") != std::string_view::npos) return true;
  for (std::string_view blocking : {"cudaMemcpy", "hipMemcpy", "cuMemcpy"})
    if (name.starts_with(blocking) && name.find("Async") == std::string_view::npos) return true;
  return false;
}

GpuAnalysis analyze_gpu(const TraceDocument& doc, const GpuOptions& options) {
  std::map<std::string_view, std::vector<std::uint32_t>> work, syncs;
  for (std::uint32_t k = 0; k < doc.device_ops().size(); ++k) {
    const OpEvent& w = doc.device_ops()[k];
    (w.op_kind == OpKind::sync ? syncs : work)[w.device].push_back(k);
  }
  for (const auto& [device, items] : syncs) work.try_emplace(device);
  const auto calls = calls_by_correlation(doc);
  GpuAnalysis a;
  for (const auto& [device, items] : work)
    a.devices.push_back(analyze_device(doc, device, items, syncs[device], calls, options));
  add_sync_stalls(doc, a);
  return a;
}

}  // namespace candle_graph::device
