#include "evidence/gpu_trace_json.hpp"

namespace candle_graph::evidence {
using output::JsonStream;

void write_launch_stats(JsonStream& w, const device::LaunchStats& l) {
  w.begin_object();
  w.key("count").u64(l.count);
  w.key("delay_outliers").u64(l.delay_outliers);
  w.key("max_delay_ns").u64(l.max_delay_ns);
  w.key("mean_delay_ns").u64(l.mean_delay_ns);
  w.key("p50_delay_ns").u64(l.p50_delay_ns);
  w.key("p95_delay_ns").u64(l.p95_delay_ns);
  w.key("runtime_outliers").u64(l.runtime_outliers);
  w.key("short_kernels").u64(l.short_kernels);
  w.end_object();
}

void write_stream_idle(JsonStream& w, const device::StreamIdle& s) {
  w.begin_object();
  w.key("busy_ns").u64(s.busy_ns);
  w.key("host_wait_ns").u64(s.host_wait_ns);
  w.key("kernel_wait_ns").u64(s.kernel_wait_ns);
  w.key("other_wait_ns").u64(s.other_wait_ns);
  w.key("stream").u64(s.stream);
  w.end_object();
}

void write_sync_stall(JsonStream& w, const device::SyncStall& s) {
  w.begin_object();
  w.key("call").string(s.call);
  w.key("count").u64(s.count);
  w.key("ns").u64(s.ns);
  w.end_object();
}

namespace {

void write_device(JsonStream& w, const device::DeviceGpu& d) {
  w.begin_object();
  w.key("busy_ns").u64(d.busy_ns);
  w.key("comm_compute_overlap");
  d.comm_compute_overlap ? w.f64(*d.comm_compute_overlap) : w.null();
  w.key("communication_ns").u64(d.communication_ns);
  w.key("compute_ns").u64(d.compute_ns);
  w.key("device").string(d.device);
  w.key("idle_host_wait_ns").u64(d.idle_host_wait_ns);
  w.key("idle_kernel_wait_ns").u64(d.idle_kernel_wait_ns);
  w.key("idle_ns").u64(d.idle_ns);
  w.key("idle_other_ns").u64(d.idle_other_ns);
  w.key("kernel_types").begin_array();
  for (const device::KernelTypeTime& t : d.kernel_types)
    w.begin_object().key("ns").u64(t.ns).key("type").string(t.type).end_object();
  w.end_array();
  w.key("launches");
  write_launch_stats(w, d.launches);
  w.key("memory_ns").u64(d.memory_ns);
  w.key("streams").begin_array();
  for (const device::StreamIdle& s : d.streams) write_stream_idle(w, s);
  w.end_array();
  w.key("sync_ns").u64(d.sync_ns);
  w.key("sync_stalls").begin_array();
  for (const device::SyncStall& s : d.sync_stalls) write_sync_stall(w, s);
  w.end_array();
  w.key("window_ns").u64(d.window_ns);
  w.end_object();
}

}  // namespace

void write_gpu_devices(JsonStream& w, const device::GpuAnalysis& a) {
  w.begin_array();
  for (const device::DeviceGpu& d : a.devices) write_device(w, d);
  w.end_array();
}

void write_gpu_trace(JsonStream& w, const device::GpuAnalysis& a, const TraceDocument& doc,
                     std::size_t span_limit) {
  w.begin_object();
  w.key("devices");
  write_gpu_devices(w, a);
  w.key("host_sync_ns").u64(a.host_sync_ns);
  w.key("span_sync_stalls").begin_array();
  for (std::size_t i = 0; i < a.span_sync_stalls.size() && i < span_limit; ++i) {
    const device::SpanSyncStall& s = a.span_sync_stalls[i];
    w.begin_object();
    w.key("call").string(s.call);
    w.key("count").u64(s.count);
    w.key("ns").u64(s.ns);
    w.key("span").string(doc.spans()[s.span].name);
    w.end_object();
  }
  w.end_array();
  w.key("span_sync_stalls_total").u64(a.span_sync_stalls.size());
  w.end_object();
}

}  // namespace candle_graph::evidence
