// `candle-graph export TRACE... --format chrome|sqlite -o OUT`: a trace (and its analysis) in a
// format other tools open. Each format's runner lives in its own export_<format>_command.cpp.
#include <memory>

#include "cli/analysis_support.hpp"
#include "cli/command.hpp"

namespace candle_graph::cli {

Runner register_export(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "export",
      "Write traces in a format other tools open.\n"
      "  --format chrome  Chrome Trace Event JSON (object form) for ui.perfetto.dev and\n"
      "                   chrome://tracing; gzip when OUT ends in .gz. One trace.\n"
      "  --format sqlite  a SQLite database of one or many traces, one run_id per trace;\n"
      "                   query it with `candle-graph sql` or any SQLite client.\n"
      "The output is written atomically (temporary sibling, then rename); a device or pipe\n"
      "(/dev/null, /dev/stdout) is written in place. --format chrome -o - writes to stdout.\n"
      "Exit: 0 ok, 1 unreadable or untrusted trace, 2 usage error.\n"
      "Examples: candle-graph export run/trace.jsonl --format chrome -o "
      "run/trace.perfetto.json.gz\n"
      "          candle-graph export a.jsonl b.jsonl --format sqlite -o runs.db");
  cmd->add_option("TRACE", args->traces, kTraceInputHelp)->required();
  cmd->add_option("--format", args->format, "output format")
      ->required()
      ->check(CLI::IsMember({"chrome", "sqlite"}));
  cmd->add_option("-o,--output", args->output, "file to write")->required();
  add_nsight_option(cmd, args->nsight_dir);
  add_step_option(cmd, args->step);
  add_threads_option(cmd);
  cmd->add_flag("--append", args->append,
                "sqlite: add the runs to an existing database instead of refusing to replace it");
  return [args] {
    if (args->format == "chrome") return run_export_chrome(*args);
    return run_export_sqlite(*args);
  };
}

}  // namespace candle_graph::cli
