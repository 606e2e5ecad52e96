#include "evidence/packet_builder.hpp"

namespace candle_graph::evidence {
namespace {

void relabel(std::string& text, const std::string& from, const std::string& to) {
  if (text.size() >= from.size() && text.compare(0, from.size(), from) == 0 &&
      (text.size() == from.size() || text[from.size()] == '/' || text[from.size()] == ':'))
    text.replace(0, from.size(), to);
}

}  // namespace

EvidencePacket build_packet(const TraceDocument& doc, const TraceDocument* baseline,
                            const std::optional<std::filesystem::path>& nsight_dir,
                            const std::optional<std::string>& label, const GraphOptions& options) {
  std::optional<Comparison> comparison;
  if (baseline) comparison = compare_documents(*baseline, doc);
  import::nsight::NsightEvidence gpu = import::nsight::load_optional(
      nsight_dir, nsight_dir ? expected_semantic_keys(doc) : std::vector<std::string>{});
  if (nsight_dir && label) {
    // The loader names files `DIR/FILE` (and diagnostics `DIR/FILE:LINE: …`).
    std::string from = nsight_dir->string();
    while (from.size() > 1 && from.back() == '/') from.pop_back();
    for (auto& p : gpu.source_csv) relabel(p, from, *label);
    if (gpu.raw_report) relabel(*gpu.raw_report, from, *label);
    for (auto& d : gpu.diagnostics) relabel(d, from, *label);
    if (gpu.reason) relabel(*gpu.reason, from, *label);
  }
  return make_evidence_packet(doc, std::move(gpu), std::move(comparison), options);
}

}  // namespace candle_graph::evidence
