// trace6.md §9.2 build_evidence over parsed documents: the optional baseline comparison, the GPU
// evidence (trace6.md §10.2 load_optional) and the packet. Every command that prints or publishes
// evidence builds it here, bundles included (publication and `verify --semantic`).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "candle_graph/trace.hpp"
#include "evidence/evidence_packet.hpp"

namespace candle_graph::evidence {

// `nsight_dir` is where the Nsight files are read from now; with a `label`, every path of the
// GPU evidence that starts with it is rewritten to start with `label` instead (e.g. "nsight"), so
// a bundle's evidence names its files bundle-relative wherever the bundle lies.
// Throws Error("trace is structurally untrusted: …") on an untrusted trace.
EvidencePacket build_packet(const TraceDocument& doc, const TraceDocument* baseline,
                            const std::optional<std::filesystem::path>& nsight_dir,
                            const std::optional<std::string>& label,
                            const GraphOptions& options = {});

}  // namespace candle_graph::evidence
