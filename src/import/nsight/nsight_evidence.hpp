// NsightEvidence: optional GPU evidence normalised from `nsys stats --format csv` reports (spec
// trace6.md §10). It is the `gpu` member of candle-graph/evidence/1. Loading never throws: a
// missing directory or a malformed CSV only changes `status`/`reason`/`diagnostics`, so application
// evidence stays valid.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "output/json_stream.hpp"

namespace candle_graph::import::nsight {

// trace6.md §3 GpuEvidenceStatus; wire strings `available`, `unavailable`, `failed`.
enum class GpuEvidenceStatus { available, unavailable, failed };
const char* to_string(GpuEvidenceStatus status);

// trace6.md §10.1 coverage: which kinds of report contributed rows. The first five are the
// original's; the last three are additions, serialized only when true so old readers see the same
// object.
struct NsightCoverage {
  bool kernel_summary = false;       // cuda_gpu_kern_sum / gpukernsum
  bool runtime_summary = false;      // cuda_api_sum / cudaapisum
  bool memory_summary = false;       // cuda_gpu_mem_time_sum / gpumemtimesum
  bool nvtx_projection = false;      // nvtx_gpu_proj_trace
  bool gpu_timeline = false;         // cuda_gpu_trace / gputrace
  bool memory_size_summary = false;  // added: cuda_gpu_mem_size_sum / gpumemsizesum
  bool nvtx_host_ranges = false;     // added: nvtx_pushpop_trace
  bool nvtx_summary = false;         // added: nvtx_sum / nvtxsum / nvtx_pushpop_sum
};

// trace6.md §10.1 correlation between NVTX projected ranges and the application's span names
// (§10.3). Clocks are never aligned: Candle host time and Nsight GPU time stay separate.
struct NsightCorrelation {
  std::string mode = "none";  // "none" or "nvtx_projected_range"
  bool clock_aligned = false;
  bool complete = false;
  std::uint64_t matched_ranges = 0;
  std::uint64_t total_ranges = 0;
  std::optional<std::string> reason = "No projected NVTX ranges were normalized";
};

// trace6.md §10.4 per-file row cap bookkeeping (100 summary rows, 500 timeline rows).
struct NsightLimit {
  std::uint64_t total_rows = 0;
  std::uint64_t displayed_rows = 0;
  bool truncated = false;
};

// trace6.md §10.1 NsightSummaryRow. All times in nanoseconds. Kernel rows (and memory operations)
// carry an added `category`: gemm, convolution, elementwise, reduction, normalization, attention,
// communication, memcpy, memset or other.
struct NsightSummaryRow {
  std::string name;
  std::uint64_t total_ns = 0;
  std::uint64_t count = 0;
  std::uint64_t average_ns = 0;
  std::uint64_t minimum_ns = 0;
  std::uint64_t maximum_ns = 0;
  std::optional<std::string> category;  // omitted when absent
};

// Added: one row of the memory-size summary (cuda_gpu_mem_size_sum), sizes converted to bytes.
struct NsightSizeRow {
  std::string name;
  std::uint64_t total_bytes = 0;
  std::uint64_t count = 0;
  std::uint64_t average_bytes = 0;
  std::uint64_t minimum_bytes = 0;
  std::uint64_t maximum_bytes = 0;
};

// trace6.md §10.1 NsightTimelineRow. `kind` is `nvtx_range` (projected NVTX), `gpu_operation` (GPU
// trace) or, added, `nvtx_host_range` (push/pop trace). For NVTX rows `name` is the raw range name
// and `semantic_key` the name with a `domain:` / `:` prefix stripped, used for the trace6.md §10.3
// join.
struct NsightTimelineRow {
  std::string name;
  std::string kind;
  std::optional<std::uint64_t> device;
  std::optional<std::uint64_t> context;
  std::optional<std::uint64_t> stream;
  std::optional<std::uint64_t> correlation_id;
  std::optional<std::string> semantic_key;
  std::uint64_t start_ns = 0;
  std::uint64_t duration_ns = 0;
  std::optional<std::uint64_t> projected_start_ns;
  std::optional<std::uint64_t> projected_duration_ns;
  std::optional<std::uint64_t> gpu_operations;
  std::optional<bool> matched;  // added, NVTX rows: semantic_key is one of the expected span names
  std::optional<std::string> category;  // added, GPU operations only
  std::optional<std::uint64_t> bytes;   // added, memcpy/memset GPU operations only
};

// trace6.md §10.1 NsightEvidence. Field order is the JSON declaration order.
struct NsightEvidence {
  GpuEvidenceStatus status = GpuEvidenceStatus::unavailable;
  std::optional<std::string> reason;      // omitted when absent (always absent when available)
  std::optional<std::string> raw_report;  // first *.nsys-rep in the directory; never parsed
  std::vector<std::string> source_csv;    // paths of successfully parsed CSVs
  NsightCoverage coverage;
  NsightCorrelation correlation;
  std::vector<std::string> diagnostics;       // "{path}: {error}" (line number in the error)
  std::map<std::string, NsightLimit> limits;  // file name → cap info, sorted keys
  std::vector<NsightSummaryRow> kernels;      // sorted by total_ns descending, ≤ 100 per file
  std::vector<NsightSummaryRow> runtime_calls;
  std::vector<NsightSummaryRow> memory_operations;
  std::vector<NsightTimelineRow> nvtx_ranges;  // projected NVTX, sorted by start_ns, ≤ 500
  std::vector<NsightTimelineRow> gpu_timeline;
  std::vector<NsightSizeRow> memory_sizes;          // added; omitted from JSON when empty
  std::vector<NsightTimelineRow> nvtx_host_ranges;  // added; omitted from JSON when empty
  std::vector<NsightSummaryRow> nvtx_summary;       // added; omitted from JSON when empty
};

// trace6.md §10.1 `unavailable(reason)`: empty collections, default coverage and correlation.
NsightEvidence unavailable(std::string reason);

// trace6.md §10.2: no dir → unavailable("Nsight capture was not requested"); a load error → status
// failed with the error text as reason. `expected_keys` are the measured subtree's span names
// (trace6.md §9.2). Never throws.
NsightEvidence load_optional(const std::optional<std::filesystem::path>& dir,
                             const std::vector<std::string>& expected_keys);

// The `gpu` member of evidence/1: declaration order in the packet (trace6.md §9.5), sorted keys in
// the viewer payload.
void write_nsight_json(output::JsonStream& w, const NsightEvidence& evidence,
                       output::KeyOrder order);

}  // namespace candle_graph::import::nsight
