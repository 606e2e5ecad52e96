// `candle-graph validate TRACE [-o FILE] [--require-trusted]`
#include <memory>

#include "candle_graph/health.hpp"
#include "candle_graph/import.hpp"
#include "cli/analysis_support.hpp"
#include "cli/command.hpp"
#include "health/health_json.hpp"

namespace candle_graph::cli {

Runner register_validate(CLI::App& app) {
  struct Args {
    std::filesystem::path trace;
    std::optional<std::filesystem::path> output;
    bool require_trusted = false;
    std::string step;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "Parse a trace, check every line (or event) and the span hierarchy, and report its health.\n"
      "A trace/6 file, or a PyTorch profiler trace (Kineto or legacy, plain or .gz) or our Chrome\n"
      "export as it imports (then `source` says from what, and what was repaired or dropped).\n"
      "Prints candle-graph/validation/1 JSON: trusted, issues (the health codes), coverage.\n"
      "Exit: 0 parsed (whatever the health), 3 untrusted with --require-trusted,\n"
      "      1 parse or I/O error (FILE:LINE: message on stderr), 2 usage error.\n"
      "Example: candle-graph validate run/trace.jsonl --require-trusted");
  cmd->add_option("TRACE", args->trace, "the trace to check (any format `import` reads)")
      ->required();
  add_step_option(cmd, args->step);
  add_threads_option(cmd);
  cmd->add_option("-o,--output", args->output, "write the JSON here instead of stdout");
  cmd->add_flag("--require-trusted", args->require_trusted,
                "exit 3 when the trace parses but is not trusted (for CI gates)");
  return [args] {
    const std::string label = args->trace.string();
    const ImportedTrace imported = import_trace(args->trace, import_options(args->step, label));
    const TraceDocument& doc = imported.document;
    const TraceHealth health = analyze_health(doc, read_threads());
    const ImportReport& source = imported.report;
    emit_json(args->output, {args->trace}, [&](output::JsonStream& w) {
      w.begin_object();
      w.schema_key("schema").string(kValidationSchema);
      w.schema_key("trace").string(label);
      w.schema_key("events").u64(doc.event_count());
      write_health_json(w.schema_key("health"), health, output::KeyOrder::declaration);
      if (source.format != "trace6") {  // added: what the importer did (trace/6 prints nothing)
        w.schema_key("source").begin_object();
        w.schema_key("format").string(source.format);
        w.schema_key("events").u64(source.source_events);
        w.schema_key("measured").string(source.measured);
        w.schema_key("repairs").begin_object();
        for (const auto& [what, count] : source.repairs) w.key(what).u64(count);
        w.end_object();
        w.end_object();
      }
      w.end_object();
    });
    return args->require_trusted && !health.trusted ? kExitUntrusted : kExitOk;
  };
}

}  // namespace candle_graph::cli
