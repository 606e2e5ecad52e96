#include "evidence/capture_overhead.hpp"

#include <cstdio>
#include <string_view>

#include "evidence/report_digest.hpp"

namespace candle_graph::evidence {
namespace {

std::string ms2(std::uint64_t ns) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f ms", static_cast<double>(ns) / 1e6);
  return buf;
}

}  // namespace

std::optional<CaptureOverhead> read_capture_overhead(const TraceDocument& doc,
                                                     double measured_total_ms) {
  // Absent or unreadable (a hand-edited file): no overhead stated, or 0 of a part.
  const auto number = [&](std::string_view key) {
    return doc.run().find_number_tag<std::uint64_t>(key);
  };
  const auto estimate = number("capture.overhead_estimate_ns");
  if (!estimate) return std::nullopt;
  CaptureOverhead o;
  o.estimate_ns = *estimate;
  o.per_op_ns = number("capture.overhead_per_op_ns").value_or(0);
  o.ops = number("capture.ops_recorded").value_or(0);
  o.per_memory_event_ns = number("capture.overhead_per_memory_event_ns").value_or(0);
  o.memory_events = number("capture.memory_events_recorded").value_or(0);
  const double total_ns = measured_total_ms * 1e6;
  o.share = total_ns > 0 ? static_cast<double>(o.estimate_ns) / total_ns : 0.0;
  return o;
}

std::string describe_capture_overhead(const CaptureOverhead& o) {
  std::string s =
      "~" + ms2(o.estimate_ns) + " (" + format_share(o.share) + " of the measured total";
  if (o.per_op_ns != 0) {
    s += ", estimated from " + std::to_string(o.ops) + " recorded ops × " +
         format_duration_ns(o.per_op_ns);
    if (o.per_memory_event_ns != 0)
      s += " and " + std::to_string(o.memory_events) + " memory events × " +
           format_duration_ns(o.per_memory_event_ns);
    // A start-up measurement runs in warm caches; the update's ops, interleaved with the
    // workload's own code and data, pay more (libtorch.md §4.1).
    s += " measured at start; a lower bound";
  }
  return s + ")";
}

std::optional<std::string> capture_overhead_gap(const CaptureOverhead& o) {
  if (!(o.share > kCaptureOverheadGapShare)) return std::nullopt;
  return "the capture's own cost is estimated at " + describe_capture_overhead(o) +
         ", over 10% of the measured total: op and span times include it, so compare them "
         "with an uninstrumented run before reading small differences";
}

}  // namespace candle_graph::evidence
