// The GPU analysis of a trace's own device work (device/gpu_analysis.hpp) as JSON: the `devices`
// array of `query --kind gpu` and of the evidence packet's `gpu_trace` member, keys sorted.
#pragma once

#include "device/gpu_analysis.hpp"
#include "output/json_stream.hpp"

namespace candle_graph::evidence {

// [{device, window_ns, busy_ns, idle_ns, compute_ns, communication_ns, memory_ns, sync_ns,
//   kernel_types, streams, comm_compute_overlap, launches, sync_stalls}, …]
// {count, delay_outliers, max_delay_ns, mean_delay_ns, p50_delay_ns, p95_delay_ns,
//  runtime_outliers, short_kernels}
void write_launch_stats(output::JsonStream& w, const device::LaunchStats& l);

// {busy_ns, host_wait_ns, kernel_wait_ns, other_wait_ns, stream}
void write_stream_idle(output::JsonStream& w, const device::StreamIdle& s);
// {call, count, ns}
void write_sync_stall(output::JsonStream& w, const device::SyncStall& s);

void write_gpu_devices(output::JsonStream& w, const device::GpuAnalysis& a);

// {devices, host_sync_ns, span_sync_stalls: [{span, call, ns, count}]} (span by name).
void write_gpu_trace(output::JsonStream& w, const device::GpuAnalysis& a, const TraceDocument& doc,
                     std::size_t span_limit = 20);

}  // namespace candle_graph::evidence
