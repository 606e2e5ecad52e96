// Placeholder: `export --format sqlite` is being built (see the open issue).
#include "candle_graph/error.hpp"
#include "cli/command.hpp"

namespace candle_graph::cli {

int run_export_sqlite(const ExportArgs&) {
  throw Error("export --format sqlite is not built yet");
}

}  // namespace candle_graph::cli
