#include "viewer/viewer_payload.hpp"

#include "candle_graph/error.hpp"

namespace candle_graph::viewer {

std::string build_viewer_payload(const std::filesystem::path& trace,
                                 const std::optional<std::filesystem::path>&,
                                 const std::optional<std::filesystem::path>&) {
  // The projection needs the EvidencePacket (src/evidence), which is not in this build yet.
  throw Error(trace.string(), 0,
              "view of a trace is not available yet in this build (needs the evidence packet); "
              "use --payload FILE with a viewer/4 JSON payload");
}

}  // namespace candle_graph::viewer
