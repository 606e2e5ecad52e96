// `candle-graph validate TRACE [-o FILE] [--require-trusted]`
#include <memory>

#include "candle_graph/health.hpp"
#include "cli/analysis_support.hpp"
#include "cli/command.hpp"
#include "health/health_json.hpp"

namespace candle_graph::cli {

Runner register_validate(CLI::App& app) {
  struct Args {
    std::filesystem::path trace;
    std::optional<std::filesystem::path> output;
    bool require_trusted = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "Parse a trace/6 file, check every line and the span hierarchy, and report its health.\n"
      "Prints candle-graph/validation/1 JSON: trusted, issues (21 health codes), coverage.\n"
      "Exit: 0 parsed (whatever the health), 3 untrusted with --require-trusted,\n"
      "      1 parse or I/O error (FILE:LINE: message on stderr), 2 usage error.\n"
      "Example: candle-graph validate run/trace.jsonl --require-trusted");
  cmd->add_option("TRACE", args->trace, "trace/6 JSONL file to check")->required();
  cmd->add_option("-o,--output", args->output, "write the JSON here instead of stdout");
  cmd->add_flag("--require-trusted", args->require_trusted,
                "exit 3 when the trace parses but is not trusted (for CI gates)");
  return [args] {
    const std::string label = args->trace.string();
    ReadOptions options;
    options.progress = progress_on_stderr(label);
    const TraceDocument doc = parse_trace(args->trace, options);
    const TraceHealth health = analyze_health(doc);
    emit_json(args->output, {args->trace}, [&](output::JsonStream& w) {
      w.begin_object();
      w.schema_key("schema").string(kValidationSchema);
      w.schema_key("trace").string(label);
      w.schema_key("events").u64(doc.event_count());
      write_health_json(w.schema_key("health"), health, output::KeyOrder::declaration);
      w.end_object();
    });
    return args->require_trusted && !health.trusted ? kExitUntrusted : kExitOk;
  };
}

}  // namespace candle_graph::cli
