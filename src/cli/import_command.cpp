// `candle-graph import TRACE [-o FILE] [--nsight-dir DIR]`: the full evidence/1 packet (trace6.md
// §11).
#include "cli/analysis_support.hpp"
#include "cli/command.hpp"
#include "evidence/evidence_json.hpp"

namespace candle_graph::cli {

Runner register_import(CLI::App& app) {
  return register_packet_command(
      app, "import",
      "Build the candle-graph/evidence/1 packet of a trusted trace: provenance, health, findings,\n"
      "facts, gaps, the graph/3 execution graph (every span and op node, edges, memory profile)\n"
      "and GPU evidence (unavailable unless --nsight-dir is given).\n"
      "Exit: 0 ok, 1 unreadable or untrusted trace (`trace is structurally untrusted: …`),\n"
      "      2 usage error.\n"
      "Example: candle-graph import run/trace.jsonl -o run/evidence.json",
      GraphOptions{}, evidence::write_evidence_packet, evidence::evidence_packet_elements);
}

}  // namespace candle_graph::cli
