// trace6.md §9.3 EvidencePacket::markdown(), plus the timing lines of §17.6 and §17.8.
#include <cstdio>

#include "compare/comparison_parts.hpp"
#include "evidence/evidence_packet.hpp"
#include "health/health_json.hpp"
#include "output/json_stream.hpp"
#include "output/markdown_text.hpp"

namespace candle_graph::evidence {
namespace {

std::string format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// trace6.md §17.8: Rust Debug names of TimingMode.
std::string_view debug_name(TimingMode m) {
  return m == TimingMode::host ? "Host" : "DeviceSynchronized";
}

// Rust's Debug of a Vec<usize>: `[8, 32]`.
std::string debug_shape(std::span<const std::uint64_t> shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

}  // namespace

std::string render_markdown(const EvidencePacket& p) {
  const TraceRunMeta& run = p.doc->run();
  std::string md;
  md += "# candle-graph evidence\n\n";
  md += std::string("- Status: **") + (p.health.trusted ? "TRUSTED" : "UNTRUSTED") + "**\n";
  md += "- Entrypoint: " + output::markdown_inline_code(run.entrypoint) + "\n";
  md += "- Capture update: " + std::to_string(run.capture_step) + " (" +
        std::to_string(run.warmup_steps) + " warmup update" + (run.warmup_steps == 1 ? "" : "s") +
        ")\n";
  md += "- Device: " + output::markdown_inline_code(run.device) + "\n";
  if (const auto model = device_identity(run).model)  // added: traces that name their GPU
    md += "- GPU model: " + output::markdown_inline_code(*model) + "\n";
  md += "- Timing mode: `" + std::string(debug_name(run.timing_mode)) + "`\n";
  md += std::string("- Measured region device-synchronized: ") +
        (run.measured_region_device_synchronized ? "true" : "false") + "\n";
  md += "- Total: " + format("%.2f", p.graph.summary.total_ms) + " ms\n";
  if (p.capture_overhead)  // added: only traces whose capture stated its cost
    md += "- Capture overhead: " + describe_capture_overhead(*p.capture_overhead) + "\n";

  md += "\n## Findings\n\n";
  if (p.findings.empty()) md += "- No trusted findings were derived.\n";
  for (const std::string& f : p.findings) md += "- " + output::markdown_line(f) + "\n";

  md += "\n## Evidence gaps\n\n";
  if (p.gaps.empty()) md += "- No known gaps.\n";
  for (const std::string& g : p.gaps) md += "- " + output::markdown_line(g) + "\n";

  md += "\n## Coverage\n\n```json\n";
  output::JsonStream coverage;
  write_coverage_json(coverage, p.health.coverage, output::KeyOrder::declaration);
  md += coverage.take();
  md += "\n```\n";

  md += "\n## Tensor checkpoints\n\n";
  const auto& tensors = p.doc->tensors();
  if (tensors.empty()) {
    md += "No tensor checkpoints were captured.\n";
  } else {
    md += "| Tensor | Shape | Dtype | Device | Storage | Requires grad |\n";
    md += "| --- | --- | --- | --- | ---: | --- |\n";
    for (const TensorEvent& t : tensors) {
      md += "| " + output::markdown_code(t.tensor_id) + " | `" + debug_shape(t.shape) + "` | " +
            output::markdown_code(t.dtype) + " | " + output::markdown_code(t.device) + " | " +
            std::to_string(t.storage_bytes.value_or(0)) + " B | " +
            (t.requires_grad ? "true" : "false") + " |\n";
    }
  }

  md += "\n## Gradient evidence\n\n";
  std::size_t attention = 0;
  for (const GradientEvent& e : p.doc->gradients()) attention += e.state != GradientState::present;
  md += std::to_string(p.doc->gradients().size()) + " parameter gradients captured; " +
        std::to_string(attention) + " require attention.\n";

  if (p.comparison) {
    md += "\n## Baseline comparison\n\n";
    if (p.comparison->total_delta_percent)
      md += "Total time changed by " + format("%+.2f", *p.comparison->total_delta_percent) + "%.\n";
    else
      md += "Total-time percentage is unavailable because the baseline was zero.\n";
    for (const std::string& w : p.comparison->warnings)
      md += "- Warning: " + output::markdown_line(w) + "\n";
  }
  return md;
}

}  // namespace candle_graph::evidence
