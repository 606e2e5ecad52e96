// The evidence of a bundle, built the same way by publication and by `verify --semantic`: the
// packet of §9.2 (baseline comparison, Nsight evidence, graph) with the Nsight file paths written
// bundle-relative (`nsight/FILE`), so the evidence does not depend on where the bundle lies.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "candle_graph/trace.hpp"
#include "evidence/evidence_packet.hpp"

namespace candle_graph::bundle {

// `nsight_dir` is where the Nsight files are read from now; with a `label`, every path of the
// GPU evidence that starts with it is rewritten to start with `label` instead (e.g. "nsight").
evidence::EvidencePacket build_packet(const TraceDocument& doc, const TraceDocument* baseline,
                                      const std::optional<std::filesystem::path>& nsight_dir,
                                      const std::optional<std::string>& label,
                                      const GraphOptions& options = {});

// The three rendered files of a bundle, as `report` and `view` write them.
std::string render_report(const evidence::EvidencePacket& packet);
std::string render_viewer(const evidence::EvidencePacket& packet);

}  // namespace candle_graph::bundle
