// `candle-graph import TRACE [-o FILE] [--nsight-dir DIR]`: the full evidence/1 packet (§11).
#include <memory>

#include "cli/analysis_support.hpp"
#include "cli/command.hpp"
#include "evidence/evidence_json.hpp"

namespace candle_graph::cli {

Runner register_import(CLI::App& app) {
  struct Args {
    std::filesystem::path trace;
    std::optional<std::filesystem::path> output;
    std::optional<std::filesystem::path> nsight_dir;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "import",
      "Build the candle-graph/evidence/1 packet of a trusted trace: provenance, health, findings,\n"
      "facts, gaps, the graph/3 execution graph (every span and op node, edges, memory profile)\n"
      "and GPU evidence (unavailable unless --nsight-dir is given).\n"
      "Exit: 0 ok, 1 unreadable or untrusted trace (`trace is structurally untrusted: …`),\n"
      "      2 usage error.\n"
      "Example: candle-graph import run/trace.jsonl -o run/evidence.json");
  cmd->add_option("TRACE", args->trace, "trace/6 JSONL file")->required();
  cmd->add_option("-o,--output", args->output, "write the JSON here instead of stdout");
  add_nsight_option(cmd, args->nsight_dir);
  return [args] {
    const TraceDocument doc = load_trace(args->trace);
    const evidence::EvidencePacket packet = build_evidence(doc, nullptr, args->nsight_dir);
    emit_json(args->output, {args->trace},
              [&](output::JsonStream& w) { evidence::write_evidence_packet(w, packet); });
    return kExitOk;
  };
}

}  // namespace candle_graph::cli
