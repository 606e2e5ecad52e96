// Recognising an nsys stats report by its header signature (nsight.md §6.2–§6.3), with
// the file name only as a fallback hint, and mapping header columns to roles (trace6.md §10.4).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "import/nsight/cell_value.hpp"

namespace candle_graph::import::nsight {

enum class ReportKind {
  kernel_summary,        // cuda_gpu_kern_sum / gpukernsum
  api_summary,           // cuda_api_sum / cudaapisum
  memory_time_summary,   // cuda_gpu_mem_time_sum / gpumemtimesum
  memory_size_summary,   // cuda_gpu_mem_size_sum / gpumemsizesum
  gpu_trace,             // cuda_gpu_trace / gputrace
  nvtx_projected_trace,  // nvtx_gpu_proj_trace
  nvtx_pushpop_trace,    // nvtx_pushpop_trace
  nvtx_summary,          // nvtx_sum / nvtxsum / nvtx_pushpop_sum / nvtxppsum
};

// Current snake_case report name, used in diagnostics and limits.
const char* report_name(ReportKind kind);
bool is_timeline(ReportKind kind);

// What a column means, independent of the nsys version that named it.
enum class Role {
  name,
  total,
  count,
  average,
  minimum,
  maximum,
  category,
  start,
  end,
  duration,
  projected_start,
  projected_duration,
  device,
  context,
  stream,
  correlation,
  gpu_operations,
  bytes,
  grid_x,
  range_id,
  level,
  range_stack,
  count_of_roles
};

// A header cell split into label and unit: `Avg (ns)` → {avg, ns}, `Start(sec)` → {start, sec},
// `Time(%)` → {time, %}, `total_time_ns` → {totaltime, ns}. `label` keeps only lowercase ASCII
// letters and digits, so `NumGPUOps` and `Num GPU Ops` both become `numgpuops`.
struct HeaderColumn {
  std::string raw;
  std::string label;
  std::string unit;
};
HeaderColumn parse_header_cell(std::string_view cell);

struct ColumnMap {
  std::vector<HeaderColumn> columns;
  std::vector<UnitScale> scales;  // unit of each column, resolved once per header
  std::array<std::optional<std::size_t>, static_cast<std::size_t>(Role::count_of_roles)> index{};

  bool has(Role role) const { return index[static_cast<std::size_t>(role)].has_value(); }
  std::optional<std::size_t> at(Role role) const { return index[static_cast<std::size_t>(role)]; }
  const HeaderColumn& column(Role role) const { return columns[*at(role)]; }
  const UnitScale& scale(Role role) const { return scales[*at(role)]; }
};

ColumnMap map_columns(const std::vector<std::string>& header_cells);

// The report a header belongs to, or nullopt when it matches no known signature.
std::optional<ReportKind> detect_report(const ColumnMap& columns);

// The report a file name suggests (`*_cuda_gpu_kern_sum.csv`, `gpukernsum.csv`, …).
std::optional<ReportKind> report_hint_from_name(std::string_view file_name);

}  // namespace candle_graph::import::nsight
