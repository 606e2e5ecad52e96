// The bundled front end (viewer/dist: shell.html, viewer.js, viewer.css), embedded into the
// library at build time by viewer/CMakeLists.txt. When node/npm were missing at build time the
// build still succeeds and `available` is false; `view` then fails with `missing_reason`.
#pragma once

#include <string_view>

namespace candle_graph::viewer {

struct ViewerAssets {
  bool available = false;
  std::string_view shell;   // HTML with @CG_CSP@, @CG_STYLE@, @CG_PAYLOAD@, @CG_SCRIPT@
  std::string_view script;  // one esbuild IIFE bundle
  std::string_view style;   // one CSS bundle
  std::string_view missing_reason;
};

// Defined in the generated viewer_assets.cpp (build directory).
const ViewerAssets& bundled_assets() noexcept;

}  // namespace candle_graph::viewer
