// `candle-graph summary TRACE [-o FILE] [--nsight-dir DIR]`: the bounded summary/1 slice (§11).
#include <memory>

#include "cli/analysis_support.hpp"
#include "cli/command.hpp"
#include "evidence/evidence_json.hpp"

namespace candle_graph::cli {

Runner register_summary(CLI::App& app) {
  struct Args {
    std::filesystem::path trace;
    std::optional<std::filesystem::path> output;
    std::optional<std::filesystem::path> nsight_dir;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "summary",
      "Print a short candle-graph/summary/1 document of a trusted trace: provenance, health,\n"
      "findings, gaps and the graph summary (measured total, 8 slowest and 8 heaviest spans,\n"
      "memory summary). Keys are sorted alphabetically.\n"
      "Exit: 0 ok, 1 unreadable or untrusted trace, 2 usage error.\n"
      "Example: candle-graph summary run/trace.jsonl | jq .summary.slowest_spans");
  cmd->add_option("TRACE", args->trace, "trace/6 JSONL file")->required();
  cmd->add_option("-o,--output", args->output, "write the JSON here instead of stdout");
  add_nsight_option(cmd, args->nsight_dir);
  return [args] {
    const TraceDocument doc = load_trace(args->trace);
    // The summary shows no edges and no memory timeline, so the graph skips building them.
    const evidence::EvidencePacket packet = build_evidence(
        doc, nullptr, args->nsight_dir, GraphOptions{.edges = false, .memory_timeline = false});
    emit_json(args->output, {args->trace},
              [&](output::JsonStream& w) { evidence::write_summary_document(w, packet); });
    return kExitOk;
  };
}

}  // namespace candle_graph::cli
