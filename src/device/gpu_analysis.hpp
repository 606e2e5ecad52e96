// The GPU's own story over the measured region, from the device work a trace recorded (the
// definitions of Meta's Holistic Trace Analysis, docs/format/pytorch.md §G1–§G8, with its
// corrections): per device the window, busy and idle time, compute / communication / memory time
// and their overlap, per stream why it was idle, launch statistics, and the time the host spent
// blocked in synchronizing calls.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "candle_graph/trace_document.hpp"

namespace candle_graph::device {

// Every threshold in real units, each a command-line option.
struct GpuOptions {
  std::uint64_t kernel_wait_ns = 30'000;     // an idle gap shorter than this is a kernel wait
  std::uint64_t runtime_cutoff_ns = 50'000;  // launch calls longer than this are outliers
  std::uint64_t delay_cutoff_ns = 100'000;   // launch delays longer than this are outliers
};

// Kernel classes by name (pytorch.md §G1, with the correction for every NCCL/RCCL name);
// memcpy and memset by their kind, never by name.
enum class WorkClass : std::uint8_t { computation, communication, memory };
WorkClass classify(const OpEvent& work);
bool is_communication_kernel(std::string_view name);

struct StreamIdle {
  std::uint64_t stream = 0;
  std::uint64_t busy_ns = 0;  // the union of the stream's work
  std::uint64_t host_wait_ns = 0;
  std::uint64_t kernel_wait_ns = 0;
  std::uint64_t other_wait_ns = 0;
};

struct LaunchStats {
  std::uint64_t count = 0;  // device work with a launching runtime call
  std::uint64_t short_kernels = 0;
  std::uint64_t runtime_outliers = 0;
  std::uint64_t delay_outliers = 0;
  std::uint64_t mean_delay_ns = 0;
  std::uint64_t p50_delay_ns = 0;
  std::uint64_t p95_delay_ns = 0;
  std::uint64_t max_delay_ns = 0;
};

struct SyncStall {
  std::string_view call;  // cudaStreamSynchronize, blocking cudaMemcpy, …
  std::uint64_t ns = 0;
  std::uint64_t count = 0;
};

// The host's synchronizing calls per span (index into doc.spans()).
struct SpanSyncStall {
  std::uint32_t span = 0;
  std::string_view call;
  std::uint64_t ns = 0;
  std::uint64_t count = 0;
};

struct KernelTypeTime {
  std::string type;  // COMPUTATION, COMMUNICATION, MEMORY or `A overlapping B`
  std::uint64_t ns = 0;
};

struct DeviceGpu {
  std::string_view device;
  std::uint64_t window_begin_ns = 0, window_ns = 0;
  std::uint64_t busy_ns = 0, idle_ns = 0;
  // The device's own idle gaps (between its busy intervals, over all streams) by the cause of the
  // work that ended each one, with the per-stream rules: they add up to idle_ns exactly.
  std::uint64_t idle_host_wait_ns = 0, idle_kernel_wait_ns = 0, idle_other_ns = 0;
  std::uint64_t compute_ns = 0, communication_ns = 0, memory_ns = 0;
  std::uint64_t sync_ns = 0;                 // device-side waits (cuda_sync rows): not busy time
  std::vector<KernelTypeTime> kernel_types;  // by time, descending
  std::vector<StreamIdle> streams;           // by stream
  // Share of communication time during which compute ran too; absent without communication.
  std::optional<double> comm_compute_overlap;
  // The same overlap in ns (communication union ∩ compute union): communication_ns minus it is
  // the exposed communication, the part no compute hides.
  std::uint64_t comm_compute_overlap_ns = 0;
  LaunchStats launches;
  std::vector<SyncStall> sync_stalls;  // by time, descending
};

struct GpuAnalysis {
  std::vector<DeviceGpu> devices;               // by device name
  std::vector<SpanSyncStall> span_sync_stalls;  // by time, descending
  std::uint64_t host_sync_ns = 0;               // Σ of every synchronizing call
};

// Host calls that block until the device finishes: *Synchronize, and blocking (not Async)
// cudaMemcpy / hipMemcpy.
bool is_synchronizing_call(std::string_view name);

GpuAnalysis analyze_gpu(const TraceDocument& doc, const GpuOptions& options = {});

}  // namespace candle_graph::device
