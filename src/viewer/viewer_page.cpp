#include "viewer/viewer_page.hpp"

#include "viewer/html_document.hpp"
#include "viewer/viewer_payload.hpp"

namespace candle_graph::viewer {

std::string render_viewer(const evidence::EvidencePacket& packet) {
  return render_evidence_html(project(packet));
}

}  // namespace candle_graph::viewer
