// NsightEvidence → JSON: the `gpu` member of evidence/1 in declaration order (trace6.md §10.1,
// trace6.md §9.5), and with sorted keys for the viewer payload. Optional row fields are omitted
// when absent.
#include "import/nsight/nsight_evidence.hpp"

namespace candle_graph::import::nsight {
namespace {

using output::JsonStream;
using output::KeyOrder;
using output::write_object;

void write_strings(JsonStream& w, const std::vector<std::string>& items) {
  w.begin_array();
  for (const std::string& s : items) w.string(s);
  w.end_array();
}

void write_coverage(JsonStream& w, const NsightCoverage& c, KeyOrder order) {
  static constexpr std::array<std::string_view, 8> kKeys = {
      "kernel_summary", "runtime_summary",     "memory_summary",   "nvtx_projection",
      "gpu_timeline",   "memory_size_summary", "nvtx_host_ranges", "nvtx_summary"};
  const std::array<bool, 8> values = {c.kernel_summary,   c.runtime_summary, c.memory_summary,
                                      c.nvtx_projection,  c.gpu_timeline,    c.memory_size_summary,
                                      c.nvtx_host_ranges, c.nvtx_summary};
  write_object(w, order, kKeys, [&](std::size_t i, std::string_view key) {
    // The added flags (5–7) only when true: a packet without such reports equals the original's.
    if (i >= 5 && !values[i]) return;
    w.schema_key(key).boolean(values[i]);
  });
}

void write_correlation(JsonStream& w, const NsightCorrelation& c, KeyOrder order) {
  static constexpr std::array<std::string_view, 6> kKeys = {
      "mode", "clock_aligned", "complete", "matched_ranges", "total_ranges", "reason"};
  write_object(w, order, kKeys, [&](std::size_t i, std::string_view key) {
    if (i == 5 && !c.reason) return;
    w.schema_key(key);
    if (i == 0) w.string(c.mode);
    if (i == 1) w.boolean(c.clock_aligned);
    if (i == 2) w.boolean(c.complete);
    if (i == 3) w.u64(c.matched_ranges);
    if (i == 4) w.u64(c.total_ranges);
    if (i == 5) w.string(*c.reason);
  });
}

void write_summary_row(JsonStream& w, const NsightSummaryRow& r, KeyOrder order) {
  static constexpr std::array<std::string_view, 7> kKeys = {
      "name", "total_ns", "count", "average_ns", "minimum_ns", "maximum_ns", "category"};
  const std::array<std::uint64_t, 5> numbers = {r.total_ns, r.count, r.average_ns, r.minimum_ns,
                                                r.maximum_ns};
  write_object(w, order, kKeys, [&](std::size_t i, std::string_view key) {
    if (i == 6 && !r.category) return;
    w.schema_key(key);
    if (i == 0) w.string(r.name);
    if (i >= 1 && i <= 5) w.u64(numbers[i - 1]);
    if (i == 6) w.string(*r.category);
  });
}

void write_size_row(JsonStream& w, const NsightSizeRow& r, KeyOrder order) {
  static constexpr std::array<std::string_view, 6> kKeys = {
      "name", "total_bytes", "count", "average_bytes", "minimum_bytes", "maximum_bytes"};
  const std::array<std::uint64_t, 5> numbers = {r.total_bytes, r.count, r.average_bytes,
                                                r.minimum_bytes, r.maximum_bytes};
  write_object(w, order, kKeys, [&](std::size_t i, std::string_view key) {
    w.schema_key(key);
    if (i == 0) w.string(r.name);
    if (i >= 1) w.u64(numbers[i - 1]);
  });
}

void write_timeline_row(JsonStream& w, const NsightTimelineRow& r, KeyOrder order) {
  static constexpr std::array<std::string_view, 15> kKeys = {"name",
                                                             "kind",
                                                             "device",
                                                             "context",
                                                             "stream",
                                                             "correlation_id",
                                                             "semantic_key",
                                                             "start_ns",
                                                             "duration_ns",
                                                             "projected_start_ns",
                                                             "projected_duration_ns",
                                                             "gpu_operations",
                                                             "matched",
                                                             "category",
                                                             "bytes"};
  auto number = [&](std::string_view key, const std::optional<std::uint64_t>& v) {
    if (v) w.schema_key(key).u64(*v);
  };
  write_object(w, order, kKeys, [&](std::size_t i, std::string_view key) {
    switch (i) {
      case 0:
        w.schema_key(key).string(r.name);
        break;
      case 1:
        w.schema_key(key).string(r.kind);
        break;
      case 2:
        number(key, r.device);
        break;
      case 3:
        number(key, r.context);
        break;
      case 4:
        number(key, r.stream);
        break;
      case 5:
        number(key, r.correlation_id);
        break;
      case 6:
        if (r.semantic_key) w.schema_key(key).string(*r.semantic_key);
        break;
      case 7:
        w.schema_key(key).u64(r.start_ns);
        break;
      case 8:
        w.schema_key(key).u64(r.duration_ns);
        break;
      case 9:
        number(key, r.projected_start_ns);
        break;
      case 10:
        number(key, r.projected_duration_ns);
        break;
      case 11:
        number(key, r.gpu_operations);
        break;
      case 12:
        if (r.matched) w.schema_key(key).boolean(*r.matched);
        break;
      case 13:
        if (r.category) w.schema_key(key).string(*r.category);
        break;
      default:
        number(key, r.bytes);
        break;
    }
  });
}

template <typename Row, typename Write>
void write_rows(JsonStream& w, const std::vector<Row>& rows, KeyOrder order, Write&& write) {
  w.begin_array();
  for (const Row& row : rows) write(w, row, order);
  w.end_array();
}

// file name → {total_rows, displayed_rows, truncated}; the map's keys are sorted already.
void write_limits(JsonStream& w, const std::map<std::string, NsightLimit>& limits, KeyOrder order) {
  static constexpr std::array<std::string_view, 3> kKeys = {"total_rows", "displayed_rows",
                                                            "truncated"};
  w.begin_object();
  for (const auto& entry : limits) {
    const NsightLimit& limit = entry.second;
    w.key(entry.first);
    write_object(w, order, kKeys, [&](std::size_t i, std::string_view key) {
      w.schema_key(key);
      if (i == 0) w.u64(limit.total_rows);
      if (i == 1) w.u64(limit.displayed_rows);
      if (i == 2) w.boolean(limit.truncated);
    });
  }
  w.end_object();
}

}  // namespace

const char* to_string(GpuEvidenceStatus status) {
  switch (status) {
    case GpuEvidenceStatus::available:
      return "available";
    case GpuEvidenceStatus::failed:
      return "failed";
    case GpuEvidenceStatus::unavailable:
      break;
  }
  return "unavailable";
}

void write_nsight_json(JsonStream& w, const NsightEvidence& e, KeyOrder order) {
  static constexpr std::array<std::string_view, 16> kKeys = {
      "status",       "reason",        "raw_report",        "source_csv",
      "coverage",     "correlation",   "diagnostics",       "limits",
      "kernels",      "runtime_calls", "memory_operations", "nvtx_ranges",
      "gpu_timeline", "memory_sizes",  "nvtx_host_ranges",  "nvtx_summary"};
  write_object(w, order, kKeys, [&](std::size_t i, std::string_view key) {
    switch (i) {
      case 0:
        w.schema_key(key).string(to_string(e.status));
        break;
      case 1:
        if (e.reason) w.schema_key(key).string(*e.reason);
        break;
      case 2:
        if (e.raw_report) w.schema_key(key).string(*e.raw_report);
        break;
      case 3:
        write_strings(w.schema_key(key), e.source_csv);
        break;
      case 4:
        write_coverage(w.schema_key(key), e.coverage, order);
        break;
      case 5:
        write_correlation(w.schema_key(key), e.correlation, order);
        break;
      case 6:
        write_strings(w.schema_key(key), e.diagnostics);
        break;
      case 7:
        write_limits(w.schema_key(key), e.limits, order);
        break;
      case 8:
        write_rows(w.schema_key(key), e.kernels, order, write_summary_row);
        break;
      case 9:
        write_rows(w.schema_key(key), e.runtime_calls, order, write_summary_row);
        break;
      case 10:
        write_rows(w.schema_key(key), e.memory_operations, order, write_summary_row);
        break;
      case 11:
        write_rows(w.schema_key(key), e.nvtx_ranges, order, write_timeline_row);
        break;
      case 12:
        write_rows(w.schema_key(key), e.gpu_timeline, order, write_timeline_row);
        break;
      // The added lists only when they hold rows.
      case 13:
        if (!e.memory_sizes.empty())
          write_rows(w.schema_key(key), e.memory_sizes, order, write_size_row);
        break;
      case 14:
        if (!e.nvtx_host_ranges.empty())
          write_rows(w.schema_key(key), e.nvtx_host_ranges, order, write_timeline_row);
        break;
      default:
        if (!e.nvtx_summary.empty())
          write_rows(w.schema_key(key), e.nvtx_summary, order, write_summary_row);
        break;
    }
  });
}

}  // namespace candle_graph::import::nsight
