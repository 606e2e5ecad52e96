// Placeholder: the `convert` command is being built (see the open issue).
#include "candle_graph/error.hpp"
#include "cli/command.hpp"

namespace candle_graph::cli {

Runner register_convert(CLI::App& app) {
  app.add_subcommand("convert", "(not built yet)");
  return []() -> int { throw Error("convert is not built yet"); };
}

}  // namespace candle_graph::cli
