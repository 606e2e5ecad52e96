// Header normalisation, column aliases across nsys 2021 → 2026 and report signatures
// (trace6.md §10.4 aliases, extended per nsight.md §6.3 and docs/compatibility.md).
#include "import/nsight/report_header.hpp"

#include <cctype>

namespace candle_graph::import::nsight {
namespace {

std::string compact_label(std::string_view text) {
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) out.push_back(static_cast<char>(std::tolower(u)));
  }
  return out;
}

// Aliases per role in priority order (first present alias wins, trace6.md §10.4). Labels are
// compacted, so `total_time_ns` and `Total Time (ns)` both arrive here as `totaltime`.
struct Alias {
  Role role;
  std::vector<std::string_view> labels;
};

const std::vector<Alias>& aliases() {
  static const std::vector<Alias> table = {
      {Role::name, {"name", "operation", "range", "kernelname"}},
      {Role::total, {"totaltime", "total"}},
      {Role::count, {"instances", "numcalls", "operations", "count", "calls"}},
      {Role::average, {"avg", "average", "mean"}},
      {Role::minimum, {"min", "minimum"}},
      {Role::maximum, {"max", "maximum"}},
      {Role::category, {"category"}},
      // `Orig Start`/`Orig Duration` are the CPU interval of nvtx_gpu_proj_trace (added aliases).
      {Role::start, {"start", "origstart"}},
      {Role::end, {"end"}},
      {Role::duration, {"duration", "dur", "origduration", "origdur"}},
      {Role::projected_start, {"projectedstart", "projstart"}},
      {Role::projected_duration, {"projectedduration", "projduration", "projdur"}},
      {Role::device, {"device", "deviceid"}},
      {Role::context, {"context", "contextid", "ctx"}},
      {Role::stream, {"stream", "streamid", "strm"}},
      {Role::correlation, {"correlationid", "corrid"}},
      {Role::gpu_operations, {"numgpuops", "gpuoperations"}},
      {Role::bytes, {"bytes"}},
      {Role::grid_x, {"grdx"}},
      {Role::range_id, {"rangeid"}},
      {Role::level, {"lvl", "level"}},
      {Role::range_stack, {"rangestack"}},
  };
  return table;
}

// Spec-style headers without parentheses carry the unit as a suffix (`start_ns`, `dur_ns`).
void split_unit_suffix(std::string& label_text, std::string& unit) {
  static constexpr std::string_view kSuffixes[] = {"_nsec", "_usec", "_msec", "_sec",  "_ns",
                                                   "_us",   "_ms",   "_mb",   "_bytes"};
  const std::string low = lower(label_text);
  for (auto suffix : kSuffixes) {
    if (low.size() > suffix.size() && low.ends_with(suffix)) {
      unit = std::string(suffix.substr(1));
      label_text.resize(label_text.size() - suffix.size());
      return;
    }
  }
}

}  // namespace

const char* report_name(ReportKind kind) {
  switch (kind) {
    case ReportKind::kernel_summary:
      return "cuda_gpu_kern_sum";
    case ReportKind::api_summary:
      return "cuda_api_sum";
    case ReportKind::memory_time_summary:
      return "cuda_gpu_mem_time_sum";
    case ReportKind::memory_size_summary:
      return "cuda_gpu_mem_size_sum";
    case ReportKind::gpu_trace:
      return "cuda_gpu_trace";
    case ReportKind::nvtx_projected_trace:
      return "nvtx_gpu_proj_trace";
    case ReportKind::nvtx_pushpop_trace:
      return "nvtx_pushpop_trace";
    case ReportKind::nvtx_summary:
      return "nvtx_sum";
  }
  return "unknown";
}

bool is_timeline(ReportKind kind) {
  return kind == ReportKind::gpu_trace || kind == ReportKind::nvtx_projected_trace ||
         kind == ReportKind::nvtx_pushpop_trace;
}

HeaderColumn parse_header_cell(std::string_view cell) {
  cell = trim(cell);
  HeaderColumn column;
  column.raw = std::string(cell);
  std::string label_text(cell);
  std::string unit;
  const auto open = cell.rfind('(');
  if (!cell.empty() && cell.back() == ')' && open != std::string_view::npos) {
    unit = lower(trim(cell.substr(open + 1, cell.size() - open - 2)));
    label_text = std::string(cell.substr(0, open));
  } else {
    split_unit_suffix(label_text, unit);
  }
  column.label = compact_label(label_text);
  column.unit = std::move(unit);
  return column;
}

ColumnMap map_columns(const std::vector<std::string>& header_cells) {
  ColumnMap map;
  map.columns.reserve(header_cells.size());
  for (const auto& cell : header_cells) {
    map.columns.push_back(parse_header_cell(cell));
    map.scales.push_back(unit_scale(map.columns.back().unit));
  }
  for (const auto& alias : aliases()) {
    auto& slot = map.index[static_cast<std::size_t>(alias.role)];
    for (auto label : alias.labels) {
      for (std::size_t i = 0; i < map.columns.size() && !slot; ++i) {
        if (map.columns[i].label == label) slot = i;
      }
      if (slot) break;
    }
  }
  return map;
}

std::optional<ReportKind> detect_report(const ColumnMap& m) {
  using R = Role;
  if (!m.has(R::name)) return std::nullopt;
  if (m.has(R::projected_start) && m.has(R::projected_duration)) {
    return ReportKind::nvtx_projected_trace;
  }
  // cuda_api_trace also has Start/Duration/CorrID; only the GPU trace has grid/context/stream.
  if (m.has(R::start) && m.has(R::duration) &&
      (m.has(R::grid_x) || m.has(R::stream) || m.has(R::context))) {
    return ReportKind::gpu_trace;
  }
  if (m.has(R::start) && m.has(R::end) &&
      (m.has(R::range_id) || m.has(R::level) || m.has(R::range_stack))) {
    return ReportKind::nvtx_pushpop_trace;
  }
  if (!m.has(R::total)) return std::nullopt;
  const UnitKind total_unit = m.scale(R::total).kind;
  const std::string& name_label = m.column(R::name).label;
  if (total_unit == UnitKind::bytes) {
    return m.has(R::count) ? std::optional(ReportKind::memory_size_summary) : std::nullopt;
  }
  if (total_unit != UnitKind::time && total_unit != UnitKind::none) return std::nullopt;
  // A bare `Total` could be time or size (the 2021 size report's unit is unverified): no guess.
  if (total_unit == UnitKind::none && m.column(R::total).label == "total") return std::nullopt;
  if (name_label == "range") return ReportKind::nvtx_summary;
  if (!m.has(R::count)) return std::nullopt;
  if (name_label == "operation") return ReportKind::memory_time_summary;
  const std::string& count_label = m.column(R::count).label;
  if (count_label == "instances") return ReportKind::kernel_summary;
  if (count_label == "numcalls" || count_label == "calls") return ReportKind::api_summary;
  return std::nullopt;
}

std::optional<ReportKind> report_hint_from_name(std::string_view file_name) {
  struct Hint {
    std::string_view needle;
    ReportKind kind;
  };
  // First match wins (trace6.md §10.3 step 3), longer names before their prefixes.
  static constexpr Hint kHints[] = {
      {"cuda_gpu_kern_sum", ReportKind::kernel_summary},
      {"gpukernsum", ReportKind::kernel_summary},
      {"cuda_api_sum", ReportKind::api_summary},
      {"cudaapisum", ReportKind::api_summary},
      {"cuda_gpu_mem_time_sum", ReportKind::memory_time_summary},
      {"gpumemtimesum", ReportKind::memory_time_summary},
      {"cuda_gpu_mem_size_sum", ReportKind::memory_size_summary},
      {"gpumemsizesum", ReportKind::memory_size_summary},
      {"nvtx_gpu_proj_trace", ReportKind::nvtx_projected_trace},
      {"cuda_gpu_trace", ReportKind::gpu_trace},
      {"gputrace", ReportKind::gpu_trace},
      {"nvtx_pushpop_trace", ReportKind::nvtx_pushpop_trace},
      {"nvtx_pushpop_sum", ReportKind::nvtx_summary},
      {"nvtxppsum", ReportKind::nvtx_summary},
      {"nvtx_sum", ReportKind::nvtx_summary},
      {"nvtxsum", ReportKind::nvtx_summary},
  };
  const std::string name = lower(file_name);
  for (const auto& hint : kHints) {
    if (name.find(hint.needle) != std::string::npos) return hint.kind;
  }
  return std::nullopt;
}

}  // namespace candle_graph::import::nsight
