// Shared helpers of the viewer tests: traces (synthetic or from the fixtures), hand-made
// front-end assets and small text utilities for inspecting a rendered page.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "candle_graph/trace.hpp"
#include "viewer/viewer_assets.hpp"

namespace cg_viewer_test {

// The synthetic trusted trace of `candle-graph synth --layers L --ops-per-span K --seed S`.
std::string synth_text(std::uint64_t layers, std::uint64_t ops_per_span, std::uint64_t seed = 1);

// tests/fixtures/<name>, read whole.
std::string read_fixture(const std::string& name);

// Non-overlapping occurrences of `needle` in `text`.
std::size_t count(std::string_view text, std::string_view needle);
// The same, ignoring ASCII case.
std::size_t count_ci(std::string_view text, std::string_view needle);

// The text between the first `open` at or after `from` and the next `close` after it; throws
// when either is missing.
std::string_view between(std::string_view text, std::string_view open, std::string_view close,
                         std::size_t from = 0);

// A tiny but complete shell with the four placeholders once each, in the order of the real
// shell (viewer/dist/shell.html): CSP meta, style, JSON payload script, code script.
inline constexpr std::string_view kShell =
    "<!DOCTYPE html><html><head>"
    "<meta http-equiv=\"Content-Security-Policy\" content=\"@CG_CSP@\">"
    "<style>@CG_STYLE@</style></head><body>"
    "<script id=\"cg-payload\" type=\"application/json\">@CG_PAYLOAD@</script>"
    "<script>@CG_SCRIPT@</script></body></html>";
inline constexpr std::string_view kScript = "document.title='cg';";
inline constexpr std::string_view kStyle = "body{color:red}";

inline candle_graph::viewer::ViewerAssets hand_made_assets() {
  return {true, kShell, kScript, kStyle, {}};
}

}  // namespace cg_viewer_test
