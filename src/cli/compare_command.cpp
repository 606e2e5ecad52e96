// `candle-graph compare BASELINE CANDIDATE [-o FILE]`: comparison/1 (§9.4). No graph is built,
// so untrusted traces compare too (then `comparable` is false).
#include <memory>

#include "cli/analysis_support.hpp"
#include "cli/command.hpp"
#include "evidence/evidence_json.hpp"

namespace candle_graph::cli {

Runner register_compare(CLI::App& app) {
  struct Args {
    std::filesystem::path baseline;
    std::filesystem::path candidate;
    std::optional<std::filesystem::path> output;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Compare a candidate trace with a baseline as candle-graph/comparison/1 JSON: whether the\n"
      "runs are comparable (entrypoint, phase, device, timing, warmup, workload tags), measured\n"
      "total and memory-peak deltas, the 50 span groups that changed most, gradient changes.\n"
      "Exit: 0 ok (even when not comparable), 1 unreadable trace, 2 usage error.\n"
      "Example: candle-graph compare main/trace.jsonl branch/trace.jsonl -o diff.json");
  cmd->add_option("BASELINE", args->baseline, "trace/6 JSONL of the reference run")->required();
  cmd->add_option("CANDIDATE", args->candidate, "trace/6 JSONL of the changed run")->required();
  cmd->add_option("-o,--output", args->output, "write the JSON here instead of stdout");
  return [args] {
    const TraceDocument baseline = load_trace(args->baseline);
    const TraceDocument candidate = load_trace(args->candidate);
    const Comparison c = compare_documents(baseline, candidate);
    emit_json(args->output, {args->baseline, args->candidate}, [&](output::JsonStream& w) {
      evidence::write_comparison(w, c, output::KeyOrder::declaration);
    });
    return kExitOk;
  };
}

}  // namespace candle_graph::cli
