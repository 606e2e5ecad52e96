// The viewer page of one evidence packet, as `view`, `report --html` and bundles write it.
#pragma once

#include <string>

#include "evidence/evidence_packet.hpp"

namespace candle_graph::viewer {

// The packet projected to viewer/4 (default limits) inside the standalone HTML document.
std::string render_viewer(const evidence::EvidencePacket& packet);

}  // namespace candle_graph::viewer
