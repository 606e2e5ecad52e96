// The candle-graph/viewer/4 payload (trace6.md §12.1 with the fixes of compatibility.md), projected
// from an evidence packet as compact JSON with sorted keys (trace6.md §9.5, §17.1). Bounded for
// huge traces (payload_bounds.hpp); what was folded is stated in the added `payload_limits` object.
#pragma once

#include <string>
#include <string_view>

#include "evidence/evidence_packet.hpp"
#include "viewer/payload_bounds.hpp"

namespace candle_graph::viewer {

inline constexpr std::string_view kViewerSchema = "candle-graph/viewer/4";

std::string project(const evidence::EvidencePacket& packet, const PayloadLimits& limits = {});

}  // namespace candle_graph::viewer
