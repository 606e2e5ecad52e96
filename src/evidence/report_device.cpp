#include "evidence/report_device.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "device/kernel_table.hpp"
#include "evidence/op_table.hpp"
#include "evidence/report_digest.hpp"
#include "evidence/step_stats.hpp"
#include "output/markdown_text.hpp"

namespace candle_graph::evidence {
namespace {

// Kernel names of templated C++ run to kilobytes: the table shows their head, the JSON (`query
// --kind kernels`) the whole name.
std::string kernel_name(std::string_view name) {
  constexpr std::size_t kShown = 120;
  if (name.size() <= kShown) return output::markdown_code(name);
  std::size_t cut = kShown;
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
  return output::markdown_code(std::string(name.substr(0, cut)) + "…");
}

std::string share_of(std::uint64_t part, std::uint64_t whole) {
  return whole ? format_share(static_cast<double>(part) / static_cast<double>(whole)) : "n/a";
}

void kernel_rows(std::string& md, const std::vector<device::KernelRow>& rows, std::uint64_t all,
                 std::size_t limit) {
  md += "| Kernel | Kind | Device | Calls | Total | Mean | Share of device time |\n";
  md += "| --- | --- | --- | ---: | ---: | ---: | ---: |\n";
  for (std::size_t i = 0; i < rows.size() && i < limit; ++i) {
    const device::KernelRow& r = rows[i];
    md += "| " + kernel_name(r.name) + " | " + std::string(to_string(r.kind)) + " | " +
          output::markdown_code(r.device) + " | " + std::to_string(r.calls) + " | " +
          format_duration_ns(r.total_ns) + " | " +
          format_duration_ns(r.calls ? r.total_ns / r.calls : 0) + " | " +
          share_of(r.total_ns, all) + " |\n";
  }
}

void launcher_rows(std::string& md, std::vector<OpRow> rows, std::size_t limit) {
  std::erase_if(rows, [](const OpRow& r) { return r.device_total_ns == 0; });
  std::stable_sort(rows.begin(), rows.end(), [](const OpRow& a, const OpRow& b) {
    return a.device_self_ns > b.device_self_ns;
  });
  if (rows.empty()) return;
  md +=
      "\nThe ops whose own launches kept the devices busiest (device self: the work an op "
      "launched itself; device total: with its nested ops'), with their host times beside:\n\n";
  md += "| Op | Calls | Device self | Device total | Host self | Host total |\n";
  md += "| --- | ---: | ---: | ---: | ---: | ---: |\n";
  for (std::size_t i = 0; i < rows.size() && i < limit; ++i) {
    const OpRow& r = rows[i];
    md += "| " + output::markdown_code(r.name) + " | " + std::to_string(r.calls) + " | " +
          format_duration_ns(r.device_self_ns) + " | " + format_duration_ns(r.device_total_ns) +
          " | " + format_duration_ns(r.host_self_ns) + " | " + format_duration_ns(r.host_total_ns) +
          " |\n";
  }
}

std::string percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", v);
  return buf;
}

}  // namespace

namespace {

std::uint64_t busy_of_all(const device::GpuAnalysis& a) {
  std::uint64_t busy = 0;
  for (const device::DeviceGpu& d : a.devices) busy += d.busy_ns;
  return busy;
}

// One bullet per device: how busy it was and why it waited, what kept it busy, its launches.
void device_lines(std::string& md, const device::DeviceGpu& d) {
  md += "- " + output::markdown_inline_code(d.device) + ": window " +
        format_duration_ns(d.window_ns) + ", busy " + format_duration_ns(d.busy_ns) + " (" +
        share_of(d.busy_ns, d.window_ns) + "), idle " + format_duration_ns(d.idle_ns) + " (" +
        share_of(d.idle_ns, d.window_ns) + ")";
  if (d.idle_ns > 0)
    md += "; idle because of: host wait " + share_of(d.idle_host_wait_ns, d.idle_ns) +
          ", kernel wait " + share_of(d.idle_kernel_wait_ns, d.idle_ns) + ", other " +
          share_of(d.idle_other_ns, d.idle_ns);
  md += "\n  - compute " + format_duration_ns(d.compute_ns) + ", communication " +
        format_duration_ns(d.communication_ns) + ", memory " + format_duration_ns(d.memory_ns);
  if (d.comm_compute_overlap)
    md += "; " + format_share(*d.comm_compute_overlap) + " of the communication ran under compute";
  if (d.sync_ns > 0) md += "; device-side waits (syncs) " + format_duration_ns(d.sync_ns);
  const device::LaunchStats& l = d.launches;
  md += "\n  - " + std::to_string(l.count) + " launches: delay from the end of the launch call " +
        "p50 " + format_duration_ns(l.p50_delay_ns) + ", p95 " +
        format_duration_ns(l.p95_delay_ns) + ", max " + format_duration_ns(l.max_delay_ns) + "; " +
        std::to_string(l.short_kernels) + " short kernels (shorter than their launch), " +
        std::to_string(l.runtime_outliers) + " slow launch calls, " +
        std::to_string(l.delay_outliers) + " late starts\n";
  for (const device::SyncStall& s : d.sync_stalls)
    md += "  - the host blocked in " + output::markdown_inline_code(s.call) + ": " +
          format_duration_ns(s.ns) + " in " + std::to_string(s.count) + " calls\n";
}

void kernel_type_rows(std::string& md, const device::DeviceGpu& d) {
  md +=
      "\n| " + output::markdown_code(d.device) + " time by kernel type | Time | Share of busy |\n";
  md += "| --- | ---: | ---: |\n";
  for (const device::KernelTypeTime& t : d.kernel_types)
    md += "| " + t.type + " | " + format_duration_ns(t.ns) + " | " + share_of(t.ns, d.busy_ns) +
          " |\n";
}

// Where the host waited for the device: synchronizing calls by span, against the measured total.
void sync_stall_rows(std::string& md, const EvidencePacket& p, std::size_t limit) {
  const auto& stalls = p.gpu_trace.span_sync_stalls;
  if (stalls.empty()) return;
  const auto total = static_cast<std::uint64_t>(std::llround(p.graph.summary.total_ms * 1e6));
  md += "\nThe host blocked in synchronizing calls, by span (" +
        format_duration_ns(p.gpu_trace.host_sync_ns) + " in all):\n\n";
  md += "| Span | Call | Calls | Time | Share of the measured total |\n";
  md += "| --- | --- | ---: | ---: | ---: |\n";
  for (std::size_t i = 0; i < stalls.size() && i < limit; ++i) {
    const device::SpanSyncStall& s = stalls[i];
    md += "| " + output::markdown_code(p.doc->spans()[s.span].name) + " | " +
          output::markdown_code(s.call) + " | " + std::to_string(s.count) + " | " +
          format_duration_ns(s.ns) + " | " + share_of(s.ns, total) + " |\n";
  }
}

}  // namespace

void device_time_section(std::string& md, const EvidencePacket& p,
                         const DeviceSectionLimits& limits) {
  const TraceDocument& doc = *p.doc;
  const device::DeviceTime& t = p.device;
  if (doc.device_ops().empty()) return;
  const std::vector<device::KernelRow> kernels = device::kernel_table(doc);
  std::uint64_t work_items = 0;
  for (const device::KernelRow& r : kernels) work_items += r.calls;
  md += "\n## GPU from the trace\n\n";
  md += "Device work the trace recorded in the measured region: " + std::to_string(work_items) +
        " kernels, memcpys and memsets, " + format_duration_ns(t.device_ns) +
        " in all; the devices were busy " + format_duration_ns(busy_of_all(p.gpu_trace)) +
        " (the union over streams). Shares here are of device time, never of host time.";
  if (t.unattributed_ns > 0)
    md += " " + format_duration_ns(t.unattributed_ns) + " (" +
          share_of(t.unattributed_ns, t.device_ns) + ") of it was launched by no recorded op.";
  if (t.sync_ns > 0)
    md += " Syncs (a stream or event waiting) took " + format_duration_ns(t.sync_ns) +
          " and are not counted as work.";
  md += "\n\n";
  for (const device::DeviceGpu& d : p.gpu_trace.devices) device_lines(md, d);
  for (const device::DeviceGpu& d : p.gpu_trace.devices)
    if (!d.kernel_types.empty()) kernel_type_rows(md, d);
  sync_stall_rows(md, p, limits.sync_stalls);
  md += "\n";
  kernel_rows(md, kernels, t.device_ns, limits.kernels);
  launcher_rows(md, op_table(p.graph, t).rows, limits.ops);
}

void profiler_steps_section(std::string& md, const EvidencePacket& p,
                            const DeviceSectionLimits& limits) {
  const TraceRunMeta& run = p.doc->run();
  if (run.profiler_steps.empty()) return;
  const StepStats s = step_stats(run);
  const std::size_t held = run.profiler_steps.size();
  md += "\n## Profiler steps\n\n";
  md +=
      "The source trace holds " + std::to_string(held) + " profiler step" + (held == 1 ? "" : "s");
  if (s.left_out_step)
    md += "; the last, `ProfilerStep#" + std::to_string(*s.left_out_step) +
          "`, was cut short by the profiler's stop and is left out of these figures";
  md += ": wall time median " + format_duration_ns(s.median_wall_ns) + ", min " +
        format_duration_ns(s.min_wall_ns) + ", max " + format_duration_ns(s.max_wall_ns) +
        ", spread " + format_duration_ns(s.spread_ns) + "; device busy median " +
        format_duration_ns(s.median_device_busy_ns) + ".";
  if (s.chosen_vs_median_percent) {
    md += " The measured step, `ProfilerStep#" + std::to_string(run.capture_step) + "`, is " +
          percent(*s.chosen_vs_median_percent) + " against the median: ";
    char bound[32];
    std::snprintf(bound, sizeof bound, "%.0f%%", kTypicalPercent);
    md += s.chosen_typical ? std::string("typical (within ±") + bound + ")."
                           : std::string("**not typical** (more than ±") + bound +
                                 " from the median); `--step N` measures another step and "
                                 "`--step all` every step.";
  }
  md += "\n\n| Step | Wall | Device busy |\n| ---: | ---: | ---: |\n";
  for (std::size_t i = 0; i < held && i < limits.steps; ++i) {
    const ProfilerStepRecord& r = run.profiler_steps[i];
    const char* note = r.step == run.capture_step  ? " (measured)"
                       : r.step == s.left_out_step ? " (cut short)"
                                                   : "";
    md += "| " + std::to_string(r.step) + note + " | " + format_duration_ns(r.wall_ns) + " | " +
          format_duration_ns(r.device_busy_ns) + " |\n";
  }
  if (held > limits.steps)
    md += "\n(" + std::to_string(held - limits.steps) +
          " more steps: `candle-graph query TRACE --kind steps` lists them all.)\n";
}

}  // namespace candle_graph::evidence
