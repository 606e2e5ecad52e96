// `candle-graph summary TRACE [-o FILE] [--nsight-dir DIR]`: the bounded summary/1 slice (trace6.md
// §11).
#include "cli/analysis_support.hpp"
#include "cli/command.hpp"
#include "evidence/evidence_json.hpp"

namespace candle_graph::cli {

Runner register_summary(CLI::App& app) {
  // The summary shows no edges and no memory timeline, so the graph skips building them.
  return register_packet_command(
      app, "summary",
      "Print a short candle-graph/summary/1 document of a trusted trace: provenance, health,\n"
      "findings, gaps and the graph summary (measured total, 8 slowest and 8 heaviest spans,\n"
      "memory summary). Keys are sorted alphabetically.\n"
      "Exit: 0 ok, 1 unreadable or untrusted trace, 2 usage error.\n"
      "Example: candle-graph summary run/trace.jsonl | jq .summary.slowest_spans",
      GraphOptions{.edges = false, .memory_timeline = false}, evidence::write_summary_document);
}

}  // namespace candle_graph::cli
