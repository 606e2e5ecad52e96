// The GPU analysis of a trace's own device work (device/gpu_analysis.hpp) as JSON: the `devices`
// array of `query --kind gpu` and of the evidence packet's `gpu_trace` member, keys sorted.
#pragma once

#include "device/gpu_analysis.hpp"
#include "output/json_stream.hpp"

namespace candle_graph::evidence {

// [{device, window_ns, busy_ns, idle_ns, compute_ns, communication_ns, memory_ns, sync_ns,
//   kernel_types, streams, comm_compute_overlap, launches, sync_stalls}, …]
void write_gpu_devices(output::JsonStream& w, const device::GpuAnalysis& a);

// {devices, host_sync_ns, span_sync_stalls: [{span, call, ns, count}]} (span by name).
void write_gpu_trace(output::JsonStream& w, const device::GpuAnalysis& a, const TraceDocument& doc,
                     std::size_t span_limit = 20);

}  // namespace candle_graph::evidence
