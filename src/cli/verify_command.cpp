// Placeholder: the `verify` command is being built (see the open issue).
#include "candle_graph/error.hpp"
#include "cli/command.hpp"

namespace candle_graph::cli {

Runner register_verify(CLI::App& app) {
  app.add_subcommand("verify", "(not built yet)");
  return []() -> int { throw Error("verify is not built yet"); };
}

}  // namespace candle_graph::cli
