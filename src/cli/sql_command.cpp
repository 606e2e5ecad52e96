// Placeholder: the `sql` command is being built (see the open issue).
#include "candle_graph/error.hpp"
#include "cli/command.hpp"

namespace candle_graph::cli {

Runner register_sql(CLI::App& app) {
  app.add_subcommand("sql", "(not built yet)");
  return []() -> int { throw Error("sql is not built yet"); };
}

}  // namespace candle_graph::cli
