// Reads a trace through the registry of importers and prints its health and measured total.
#include <cstdio>

#include "candle_graph/analysis.hpp"
#include "candle_graph/health.hpp"
#include "candle_graph/import.hpp"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  try {
    const candle_graph::ImportedTrace t = candle_graph::import_trace(argv[1]);
    const candle_graph::TraceHealth health = candle_graph::analyze_health(t.document);
    const candle_graph::ExecutionGraph graph = candle_graph::build_from_trace(t.document, health);
    std::printf("format %s trusted %d total_ms %.3f nodes %zu\n", t.report.format.c_str(),
                health.trusted ? 1 : 0, graph.summary.total_ms, graph.nodes.size());
    return 0;
  } catch (const candle_graph::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
