// The standalone viewer HTML (trace6.md §12.2): one file, no network access, the payload embedded
// as inert JSON that can never close its <script> element.
#pragma once

#include <string>
#include <string_view>

#include "viewer/viewer_assets.hpp"

namespace candle_graph::viewer {

// trace6.md §12.2: `<` → \u003c, `>` → \u003e, U+2028 → \u2028, U+2029 → \u2029 (literal backslash
// text). Applied to compact JSON text, the result is still the same JSON value.
std::string escape_for_script(std::string_view json);

// Assembles the page from the front-end assets and a compact viewer/4 JSON payload. The CSP allows
// exactly the inline script and style by SHA-256 hash and forbids every connection.
// Throws Error when the assets are unavailable or unsafe to inline.
std::string render_evidence_html(std::string_view payload_json, const ViewerAssets& assets);
std::string render_evidence_html(std::string_view payload_json);  // with bundled_assets()

}  // namespace candle_graph::viewer
