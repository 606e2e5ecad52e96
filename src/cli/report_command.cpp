// `candle-graph report TRACE [--baseline B] [--nsight-dir DIR] --json FILE --markdown FILE`:
// the evidence packet as JSON and as Markdown (§9.3, §11).
#include <memory>

#include "cli/analysis_support.hpp"
#include "cli/command.hpp"
#include "evidence/evidence_json.hpp"
#include "output/atomic_file.hpp"

namespace candle_graph::cli {

Runner register_report(CLI::App& app) {
  struct Args {
    std::filesystem::path trace;
    std::optional<std::filesystem::path> baseline;
    std::optional<std::filesystem::path> nsight_dir;
    std::filesystem::path json;
    std::filesystem::path markdown;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Write the evidence/1 packet of a trusted trace as JSON and as a Markdown report for\n"
      "humans (status, findings, gaps, coverage, tensors, gradients and, with --baseline, the\n"
      "comparison). Both files are written atomically.\n"
      "Exit: 0 ok, 1 unreadable or untrusted trace, 2 usage error.\n"
      "Example: candle-graph report run/trace.jsonl --baseline main/trace.jsonl \\\n"
      "           --json run/evidence.json --markdown run/evidence.md");
  cmd->add_option("TRACE", args->trace, "trace/6 JSONL file")->required();
  cmd->add_option("--baseline", args->baseline, "trace/6 JSONL of a run to compare against");
  add_nsight_option(cmd, args->nsight_dir);
  cmd->add_option("--json", args->json, "where to write the evidence JSON")->required();
  cmd->add_option("--markdown", args->markdown, "where to write the Markdown report")->required();
  return [args] {
    if (output::same_file(args->json, args->markdown) || args->json == args->markdown)
      throw UsageError("--json and --markdown must name different files");
    const TraceDocument doc = load_trace(args->trace);
    std::optional<TraceDocument> baseline;
    if (args->baseline) baseline = load_trace(*args->baseline);
    const evidence::EvidencePacket packet =
        build_evidence(doc, baseline ? &*baseline : nullptr, args->nsight_dir);
    const std::filesystem::path base = args->baseline.value_or(args->trace);
    emit_json(args->json, {args->trace, base},
              [&](output::JsonStream& w) { evidence::write_evidence_packet(w, packet); });
    emit_output(args->markdown, evidence::render_markdown(packet), {args->trace, base});
    return kExitOk;
  };
}

}  // namespace candle_graph::cli
