// The candle-graph/viewer/4 payload (spec §12.1 with the fixes of compatibility.md), projected
// from a trusted trace's evidence, compact JSON with sorted keys (§9.5, §17.1).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace candle_graph::viewer {

inline constexpr std::string_view kViewerSchema = "candle-graph/viewer/4";

// Parses the trace (and baseline), builds the evidence and projects it. Throws Error for
// unparsable or untrusted traces (§17.4), naming the file.
std::string build_viewer_payload(const std::filesystem::path& trace,
                                 const std::optional<std::filesystem::path>& baseline,
                                 const std::optional<std::filesystem::path>& nsight_dir);

}  // namespace candle_graph::viewer
