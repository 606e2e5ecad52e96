// The report's added Markdown sections and the terminal headline, both rendered from one
// ReportDigest (report_digest.hpp). The original's sections (markdown.cpp) come first, unchanged.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "compare/comparison_parts.hpp"
#include "evidence/report_device.hpp"
#include "evidence/report_digest.hpp"
#include "output/markdown_text.hpp"
#include "output/visible_text.hpp"

namespace candle_graph::evidence {
namespace {

std::string u64(std::uint64_t v) {
  return std::to_string(v);
}

// A headline label padded to the width of `Measured total: ` (at least one space after it).
std::string pad_label(std::string label) {
  constexpr std::size_t kWidth = 16;
  label.resize(std::max(kWidth, label.size() + 1), ' ');
  return label;
}

std::string percent_change(const std::optional<double>& p) {
  if (!p) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%+.2f%%", *p);
  return buf;
}

std::string signed_bytes(std::int64_t v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%+" PRId64 " B", v);
  return buf;
}

std::string shape_text(std::span<const std::uint64_t> shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// "0.52 ms into the measured region", "before the measured region began", … (trace time is the
// offset from the trace's clock origin, as in the JSON).
std::string when_text(const TraceDocument& doc, std::uint32_t measured, std::uint64_t ts) {
  const std::string trace_time = "trace time " + format_duration_ns(ts);
  if (measured == kNoIndex) return "at " + trace_time;
  const SpanRecord& region = doc.spans()[measured];
  if (ts < region.start_ns) return "before the measured region began (" + trace_time + ")";
  if (region.duration_ns && ts - region.start_ns > region.duration_ns)
    return "after the measured region ended (" + trace_time + ")";
  return format_duration_ns(ts - region.start_ns) + " into the measured region (" + trace_time +
         ")";
}

// An op's share of the measured total; a zero total has no shares.
std::string op_share(const TimeDigest& t, const OpNameCost& op) {
  return t.total_ms > 0 ? format_share(op.share) : "n/a";
}

void time_section(std::string& md, const EvidencePacket& p, const ReportDigest& d) {
  const TraceDocument& doc = *p.doc;
  const TimeDigest& t = d.time;
  md += "\n## Where the time went\n\n";
  if (t.top.empty()) {
    md +=
        "No op ran in the measured region, so there is no op time to break down; the spans' "
        "self times are under Findings.\n";
    return;
  }
  const auto total_ns = static_cast<std::uint64_t>(std::llround(t.total_ms * 1e6));
  md += "The " + u64(t.top.size()) + " op names with the most self time in the measured region";
  if (d.peak.measured_span != kNoIndex)
    md += " " + output::markdown_inline_code(doc.spans()[d.peak.measured_span].name) +
          " (span names below that start with `…` are relative to it)";
  md += ", of " + u64(t.op_names) + " op names and " + u64(t.op_calls) +
        " op calls. Share is of the measured total, " + format_duration_ns(total_ns) +
        "; all ops together hold " + format_duration_ns(t.op_self_time_ns) + " (" +
        format_share(t.total_ms > 0 ? static_cast<double>(t.op_self_time_ns) / (t.total_ms * 1e6)
                                    : 0.0) +
        "), the rest is the spans' own time.\n\n";
  md += "| Op | Calls | Self time | Mean | Share | Mostly in |\n";
  md += "| --- | ---: | ---: | ---: | ---: | --- |\n";
  for (const OpNameCost& op : t.top) {
    std::string where;
    for (const SpanSelfTime& s : op.spans) {
      if (!where.empty()) where += ", ";
      where += output::markdown_code(short_span_name(doc, d.peak.measured_span, s.span)) + " " +
               format_duration_ns(s.self_time_ns);
    }
    md += "| " + output::markdown_code(op.name) + " | " + u64(op.calls) + " | " +
          format_duration_ns(op.self_time_ns) + " | " + format_duration_ns(op.mean_ns) + " | " +
          op_share(t, op) + " | " + where + " |\n";
  }
}

void memory_section(std::string& md, const EvidencePacket& p, const ReportDigest& d) {
  const TraceDocument& doc = *p.doc;
  const PeakDigest& peak = d.peak;
  md += "\n## Memory at the peak\n\n";
  if (!peak.summary) {
    md += "No allocation was recorded, so there is no memory peak to show.\n";
    return;
  }
  const MemorySummary& s = *peak.summary;
  md += "- Peak: " + format_bytes(s.peak_bytes) + " live on " +
        output::markdown_inline_code(s.peak_device) + ", " +
        when_text(doc, peak.measured_span, s.peak_timestamp_ns) + "\n";
  md += "- Reached by an allocation in " +
        output::markdown_inline_code(short_span_name(doc, peak.measured_span, peak.span)) + "\n";
  md += "- Live allocations at the peak: " + u64(peak.live_allocations) + "\n\n";
  md += "| Category | Bytes | Share of peak |\n| --- | ---: | ---: |\n";
  for (const MemoryCategory c : s.peak_by_category.keys()) {
    const std::uint64_t bytes = s.peak_by_category.get(c);
    md += "| " + std::string(to_string(c)) + " | " + format_bytes(bytes) + " | " +
          format_share(static_cast<double>(bytes) / static_cast<double>(s.peak_bytes)) + " |\n";
  }
  if (peak.largest.empty()) return;
  md += "\nThe " + u64(peak.largest.size()) + " largest tensors live at the peak:\n\n";
  md += "| Tensor | Bytes | Shape | Dtype | Category | Made by op | In span |\n";
  md += "| --- | ---: | --- | --- | --- | --- | --- |\n";
  for (const LiveAllocation* a : peak.largest) {
    md +=
        "| " + output::markdown_code(a->tensor_id) + " | " + format_bytes(a->bytes) + " | " +
        output::markdown_code(shape_text(a->shape)) + " | " + output::markdown_code(a->dtype) +
        " | " + std::string(to_string(a->category)) + " | " +
        (a->op_name ? output::markdown_code(*a->op_name) : "—") + " | " +
        output::markdown_code(short_span_name(doc, peak.measured_span, doc.find_span(a->span_id))) +
        " |\n";
  }
}

void gpu_section(std::string& md, const ReportDigest& d) {
  const GpuDigest& g = d.gpu;
  if (!g.available) return;
  md += "\n## GPU\n\n";
  if (g.top_kernels.empty()) {
    md += "The Nsight reports hold no kernel summary.\n";
  } else {
    md += "The " + u64(g.top_kernels.size()) + " kernels with the most device time, of " +
          u64(g.kernel_rows) + " kernel summary rows (" + format_duration_ns(g.kernel_ns) +
          " in all):\n\n";
    md += "| Kernel | Category | Calls | Total | Mean | Share of kernel time |\n";
    md += "| --- | --- | ---: | ---: | ---: | ---: |\n";
    for (const auto* k : g.top_kernels) {
      md += "| " + output::markdown_code(k->name) + " | " + k->category.value_or("—") + " | " +
            u64(k->count) + " | " + format_duration_ns(k->total_ns) + " | " +
            format_duration_ns(k->average_ns) + " | " +
            format_share(g.kernel_ns
                             ? static_cast<double>(k->total_ns) / static_cast<double>(g.kernel_ns)
                             : 0.0) +
            " |\n";
    }
    md += "\n";
  }
  if (!g.memory_summary) {
    md +=
        "- Memory copies: unknown, the memory-operation summary (`cuda_gpu_mem_time_sum`) is "
        "not among the reports.\n";
  } else {
    md += "- Memory copies: " +
          format_share(g.device_ns
                           ? static_cast<double>(g.memcpy_ns) / static_cast<double>(g.device_ns)
                           : 0.0) +
          " of device time (" + format_duration_ns(g.memcpy_ns) + " of " +
          format_duration_ns(g.device_ns) + "; kernels " + format_duration_ns(g.kernel_ns) +
          ", memset " + format_duration_ns(g.other_memory_ns) + ")\n";
  }
  if (g.truncated)
    md +=
        "- Some reports had more rows than the evidence keeps (see `gpu.limits` in the JSON); "
        "the sums cover the rows kept.\n";
}

void baseline_section(std::string& md, const ReportDigest& d) {
  const Comparison* c = d.comparison;
  if (!c) return;
  md += "\n## Against the baseline\n\n";
  if (c->comparable) {
    md += "- Verdict: **comparable**\n";
  } else if (c->warnings.empty()) {
    md += "- Verdict: **not comparable**: one of the traces is untrusted\n";
  } else {
    std::string why;
    for (const std::string& w : c->warnings)
      why += (why.empty() ? "" : "; ") + output::markdown_line(w);
    md += "- Verdict: **not comparable**: " + why + "\n";
  }
  md += "- Runs: baseline " + output::markdown_inline_code(c->baseline_run_id) + ", candidate " +
        output::markdown_inline_code(c->candidate_run_id) + "\n";
  md += "- Total time: " + format_signed_duration_ns(c->total_delta_ns) + " (" +
        percent_change(c->total_delta_percent) + ")\n";
  md += "- Peak memory: " + format_bytes(c->baseline_peak_bytes) + " → " +
        format_bytes(c->candidate_peak_bytes) + " (" + signed_bytes(c->peak_delta_bytes) + ")\n";
  if (c->spans.empty()) {
    md += "\nNo span was compared.\n";
    return;
  }
  const std::size_t n = std::min<std::size_t>(5, c->spans.size());
  md += "\nThe " + u64(n) + " spans whose time changed most, of " + u64(c->spans.size()) +
        " compared:\n\n";
  md += "| Span | Baseline | Candidate | Change | Change % |\n";
  md += "| --- | ---: | ---: | ---: | ---: |\n";
  for (std::size_t i = 0; i < n; ++i) {
    const SpanComparison& s = c->spans[i];
    md += "| " + output::markdown_code(s.name) + " | " + format_duration_ns(s.baseline_total_ns) +
          " | " + format_duration_ns(s.candidate_total_ns) + " | " +
          format_signed_duration_ns(s.delta_ns) + " | " + percent_change(s.delta_percent) + " |\n";
  }
}

}  // namespace

std::string render_report_sections(const EvidencePacket& packet, const ReportDigest& digest) {
  std::string md;
  time_section(md, packet, digest);
  memory_section(md, packet, digest);
  gpu_section(md, digest);
  device_time_section(md, packet);
  profiler_steps_section(md, packet);
  baseline_section(md, digest);
  return md;
}

std::string render_report(const EvidencePacket& packet) {
  return render_markdown(packet) + render_report_sections(packet, make_report_digest(packet));
}

std::string render_headline(const EvidencePacket& p, const ReportDigest& d) {
  const TraceDocument& doc = *p.doc;
  std::string out;
  const std::size_t warnings = p.health.gaps().size();
  out += std::string("Trace:          ") + (p.health.trusted ? "TRUSTED" : "UNTRUSTED") + ", " +
         output::visible_text(doc.run().entrypoint) + ", update " +
         std::to_string(doc.run().capture_step) + " on " +
         output::visible_text(device_identity(doc.run()).shown());
  if (warnings)
    out += " (" + std::to_string(warnings) + " health warning" + (warnings == 1 ? "" : "s") +
           ", see the report's Evidence gaps)";
  out += "\n";
  out += "Measured total: " +
         format_duration_ns(static_cast<std::uint64_t>(std::llround(d.time.total_ms * 1e6))) + "\n";
  const std::size_t n = std::min<std::size_t>(3, d.time.top.size());
  if (n == 0) {
    out += "Heaviest ops:   none (no op ran in the measured region)\n";
  } else {
    std::vector<std::string> names;
    std::size_t width = 0;
    for (std::size_t i = 0; i < n; ++i) {
      names.push_back(output::visible_text(d.time.top[i].name));
      width = std::max(width, names.back().size());
    }
    for (std::size_t i = 0; i < n; ++i) {
      const OpNameCost& op = d.time.top[i];
      std::string& name = names[i];
      name.resize(width, ' ');
      out += (i == 0 ? "Heaviest ops:   " : "                ") + name + "  " +
             format_duration_ns(op.self_time_ns) + " self, " + op_share(d.time, op) +
             " of the total, " + std::to_string(op.calls) + " call" + (op.calls == 1 ? "" : "s") +
             "\n";
    }
  }
  if (!d.peak.summary) {
    out += "Peak memory:    none recorded\n";
  } else {
    const MemorySummary& s = *d.peak.summary;
    out += "Peak memory:    " + format_bytes(s.peak_bytes) + " on " +
           output::visible_text(s.peak_device) + ", " +
           when_text(doc, d.peak.measured_span, s.peak_timestamp_ns) + ", in " +
           (d.peak.span == kNoIndex ? std::string("(unknown span)")
                                    : output::visible_text(doc.spans()[d.peak.span].name)) +
           "\n";
  }
  // After the lines whose positions readers of the headline rely on.
  if (p.capture_overhead)
    out += "Capture cost:   " + describe_capture_overhead(*p.capture_overhead) + "\n";
  for (const device::DeviceGpu& g : p.gpu_trace.devices)
    if (g.window_ns > 0)
      out += pad_label("GPU " + output::visible_text(g.device) + ":") + "busy " +
             format_share(static_cast<double>(g.busy_ns) / static_cast<double>(g.window_ns)) +
             " of its " + format_duration_ns(g.window_ns) + " window (compute " +
             format_duration_ns(g.compute_ns) + ", communication " +
             format_duration_ns(g.communication_ns) + ", memory " +
             format_duration_ns(g.memory_ns) + "); see the report's GPU from the trace\n";
  if (const Comparison* c = d.comparison) {
    out += std::string("Against base:   ") + (c->comparable ? "comparable" : "NOT comparable") +
           ", total " + format_signed_duration_ns(c->total_delta_ns) + " (" +
           percent_change(c->total_delta_percent) + "), peak " + signed_bytes(c->peak_delta_bytes) +
           "\n";
  }
  return out;
}

}  // namespace candle_graph::evidence
