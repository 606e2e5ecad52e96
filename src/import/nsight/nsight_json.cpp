// NsightEvidence → JSON (the `gpu` member of evidence/1), declaration order per §10.1 / §9.5.
#include "import/nsight/nsight_evidence.hpp"

namespace candle_graph::import::nsight {
namespace {

using output::OrderedJson;

template <typename T>
void put_optional(OrderedJson& object, const char* key, const std::optional<T>& value) {
  if (value) object[key] = *value;  // §10.1: optional row fields are omitted when absent
}

OrderedJson coverage_json(const NsightCoverage& c) {
  OrderedJson j = OrderedJson::object();
  j["kernel_summary"] = c.kernel_summary;
  j["runtime_summary"] = c.runtime_summary;
  j["memory_summary"] = c.memory_summary;
  j["nvtx_projection"] = c.nvtx_projection;
  j["gpu_timeline"] = c.gpu_timeline;
  // Added flags only when true: a packet without such reports equals the original's.
  if (c.memory_size_summary) j["memory_size_summary"] = true;
  if (c.nvtx_host_ranges) j["nvtx_host_ranges"] = true;
  if (c.nvtx_summary) j["nvtx_summary"] = true;
  return j;
}

OrderedJson correlation_json(const NsightCorrelation& c) {
  OrderedJson j = OrderedJson::object();
  j["mode"] = c.mode;
  j["clock_aligned"] = c.clock_aligned;
  j["complete"] = c.complete;
  j["matched_ranges"] = c.matched_ranges;
  j["total_ranges"] = c.total_ranges;
  put_optional(j, "reason", c.reason);
  return j;
}

OrderedJson summary_row_json(const NsightSummaryRow& r) {
  OrderedJson j = OrderedJson::object();
  j["name"] = r.name;
  j["total_ns"] = r.total_ns;
  j["count"] = r.count;
  j["average_ns"] = r.average_ns;
  j["minimum_ns"] = r.minimum_ns;
  j["maximum_ns"] = r.maximum_ns;
  put_optional(j, "category", r.category);
  return j;
}

OrderedJson size_row_json(const NsightSizeRow& r) {
  OrderedJson j = OrderedJson::object();
  j["name"] = r.name;
  j["total_bytes"] = r.total_bytes;
  j["count"] = r.count;
  j["average_bytes"] = r.average_bytes;
  j["minimum_bytes"] = r.minimum_bytes;
  j["maximum_bytes"] = r.maximum_bytes;
  return j;
}

OrderedJson timeline_row_json(const NsightTimelineRow& r) {
  OrderedJson j = OrderedJson::object();
  j["name"] = r.name;
  j["kind"] = r.kind;
  put_optional(j, "device", r.device);
  put_optional(j, "context", r.context);
  put_optional(j, "stream", r.stream);
  put_optional(j, "correlation_id", r.correlation_id);
  put_optional(j, "semantic_key", r.semantic_key);
  j["start_ns"] = r.start_ns;
  j["duration_ns"] = r.duration_ns;
  put_optional(j, "projected_start_ns", r.projected_start_ns);
  put_optional(j, "projected_duration_ns", r.projected_duration_ns);
  put_optional(j, "gpu_operations", r.gpu_operations);
  put_optional(j, "matched", r.matched);
  put_optional(j, "category", r.category);
  put_optional(j, "bytes", r.bytes);
  return j;
}

template <typename Row, typename Fn>
OrderedJson array_json(const std::vector<Row>& rows, Fn&& convert) {
  OrderedJson j = OrderedJson::array();
  for (const auto& row : rows) j.push_back(convert(row));
  return j;
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

OrderedJson to_json(const NsightEvidence& e) {
  OrderedJson j = OrderedJson::object();
  j["status"] = to_string(e.status);
  put_optional(j, "reason", e.reason);
  put_optional(j, "raw_report", e.raw_report);
  j["source_csv"] = e.source_csv;
  j["coverage"] = coverage_json(e.coverage);
  j["correlation"] = correlation_json(e.correlation);
  j["diagnostics"] = e.diagnostics;
  OrderedJson limits = OrderedJson::object();  // std::map iteration = sorted keys (§9.5 maps)
  for (const auto& [file, limit] : e.limits) {
    OrderedJson l = OrderedJson::object();
    l["total_rows"] = limit.total_rows;
    l["displayed_rows"] = limit.displayed_rows;
    l["truncated"] = limit.truncated;
    limits[file] = std::move(l);
  }
  j["limits"] = std::move(limits);
  j["kernels"] = array_json(e.kernels, summary_row_json);
  j["runtime_calls"] = array_json(e.runtime_calls, summary_row_json);
  j["memory_operations"] = array_json(e.memory_operations, summary_row_json);
  j["nvtx_ranges"] = array_json(e.nvtx_ranges, timeline_row_json);
  j["gpu_timeline"] = array_json(e.gpu_timeline, timeline_row_json);
  if (!e.memory_sizes.empty()) j["memory_sizes"] = array_json(e.memory_sizes, size_row_json);
  if (!e.nvtx_host_ranges.empty())
    j["nvtx_host_ranges"] = array_json(e.nvtx_host_ranges, timeline_row_json);
  if (!e.nvtx_summary.empty()) j["nvtx_summary"] = array_json(e.nvtx_summary, summary_row_json);
  return j;
}

}  // namespace candle_graph::import::nsight
