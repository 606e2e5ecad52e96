// Placeholder: `export --format chrome` is being built (see the open issue).
#include "candle_graph/error.hpp"
#include "cli/command.hpp"

namespace candle_graph::cli {

int run_export_chrome(const ExportArgs&) {
  throw Error("export --format chrome is not built yet");
}

}  // namespace candle_graph::cli
