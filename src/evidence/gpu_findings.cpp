#include "evidence/gpu_findings.hpp"

#include <cstdio>

#include "evidence/report_digest.hpp"
#include "output/markdown_text.hpp"

namespace candle_graph::evidence {
namespace {

std::string pct(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", fraction * 100.0);
  return buf;
}

double share(std::uint64_t part, std::uint64_t whole) {
  return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// Why the device waited, by the largest cause of its idle time, with the advice it suggests.
std::string idle_cause(const device::DeviceGpu& d) {
  const std::uint64_t host = d.idle_host_wait_ns, kernel = d.idle_kernel_wait_ns,
                      other = d.idle_other_ns;
  if (d.idle_ns == 0) return "";
  if (host >= kernel && host >= other)
    return "; " + pct(share(host, d.idle_ns)) +
           " of the idle time the host had not yet launched the next work (launch-bound: "
           "fewer, larger kernels or CUDA graphs would help)";
  if (kernel >= other)
    return "; " + pct(share(kernel, d.idle_ns)) +
           " of the idle time was short gaps between back-to-back kernels (kernel wait: fusing "
           "small kernels would help)";
  return "; " + pct(share(other, d.idle_ns)) +
         " of the idle time had another cause (long gaps after work the host launched early: "
         "synchronization or dependencies between streams)";
}

}  // namespace

std::vector<std::string> gpu_findings(const device::GpuAnalysis& a, const TraceDocument& doc,
                                      std::uint64_t measured_total_ns,
                                      const GpuFindingRules& rules) {
  std::vector<std::string> out;
  for (const device::DeviceGpu& d : a.devices) {
    if (d.window_ns == 0) continue;
    const double idle = share(d.idle_ns, d.window_ns);
    if (idle >= rules.idle_share)
      out.push_back("GPU " + std::string(d.device) + " idle " + pct(idle) + " of its " +
                    format_duration_ns(d.window_ns) + " window" + idle_cause(d) +
                    " (rule: idle ≥ " + pct(rules.idle_share) + " of the window)");
    if (d.communication_ns > 0 && share(d.communication_ns, d.busy_ns) > rules.comm_busy_share)
      out.push_back("GPU " + std::string(d.device) + ": communication " +
                    pct(share(d.communication_ns, d.busy_ns)) + " of busy time (" +
                    format_duration_ns(d.communication_ns) + "), " +
                    pct(d.comm_compute_overlap.value_or(0)) +
                    " of it hidden under compute (rule: any communication kernel)");
  }
  for (const device::SpanSyncStall& s : a.span_sync_stalls) {
    const double part = share(s.ns, measured_total_ns);
    if (part < rules.sync_share) break;  // sorted by time, descending
    out.push_back(pct(part) + " of the measured time the host was blocked in " +
                  std::string(s.call) + " inside " + output::quoted_code(doc.spans()[s.span].name) +
                  " (" + std::to_string(s.count) + " calls, " + format_duration_ns(s.ns) +
                  "; rule: ≥ " + pct(rules.sync_share) + " of the measured total)");
  }
  return out;
}

}  // namespace candle_graph::evidence
