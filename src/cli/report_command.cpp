// `candle-graph report TRACE [--baseline B] [--nsight-dir DIR] --json FILE --markdown FILE
// [--html FILE] [--headline]`: the evidence packet as JSON and as Markdown (§9.3, §11, plus the
// added sections of report_digest.hpp), optionally the viewer of the same packet, and the report's
// top lines on stdout.
#include <cstdio>
#include <memory>

#include "cli/analysis_support.hpp"
#include "cli/command.hpp"
#include "evidence/evidence_json.hpp"
#include "evidence/report_digest.hpp"
#include "output/atomic_file.hpp"
#include "viewer/html_document.hpp"
#include "viewer/viewer_payload.hpp"

namespace candle_graph::cli {
namespace {

// A path as a POSIX shell word: unchanged when it holds only safe characters, else single-quoted.
std::string report_shell_word(const std::string& text) {
  const bool safe = !text.empty() && text.find_first_not_of(
                                         "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                         "0123456789/._-+:@%,=") == std::string::npos;
  if (safe) return text.front() == '-' ? "./" + text : text;
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

Runner register_report(CLI::App& app) {
  struct Args {
    std::filesystem::path trace;
    std::optional<std::filesystem::path> baseline;
    std::optional<std::filesystem::path> nsight_dir;
    std::filesystem::path json;
    std::filesystem::path markdown;
    std::optional<std::filesystem::path> html;
    bool headline = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Write the evidence/1 packet of a trusted trace as JSON and as a Markdown report for\n"
      "humans: the original's sections (status, findings, gaps, coverage, tensors, gradients,\n"
      "baseline comparison), then where the time went (top ops by self time), memory at the\n"
      "peak, GPU (with --nsight-dir) and against the baseline (with --baseline). --html adds the\n"
      "viewer of the same packet; --headline prints the report's top lines and the output paths.\n"
      "Every file is written atomically.\n"
      "Exit: 0 ok, 1 unreadable or untrusted trace, 2 usage error.\n"
      "Example: candle-graph report run/trace.jsonl --baseline main/trace.jsonl \\\n"
      "           --json run/evidence.json --markdown run/report.md --html run/viewer.html \\\n"
      "           --headline");
  cmd->add_option("TRACE", args->trace, "trace/6 JSONL file")->required();
  cmd->add_option("--baseline", args->baseline, "trace/6 JSONL of a run to compare against");
  add_nsight_option(cmd, args->nsight_dir);
  cmd->add_option("--json", args->json, "where to write the evidence JSON")->required();
  cmd->add_option("--markdown", args->markdown, "where to write the Markdown report")->required();
  cmd->add_option("--html", args->html, "also write the HTML viewer of the same packet here");
  cmd->add_flag("--headline", args->headline,
                "print the trust verdict, measured total, three heaviest ops, peak memory and the "
                "output paths to stdout");
  return [args] {
    if (output::same_file(args->json, args->markdown) || args->json == args->markdown)
      throw UsageError("--json and --markdown must name different files");
    if (args->html && (*args->html == args->json || *args->html == args->markdown ||
                       output::same_file(*args->html, args->json) ||
                       output::same_file(*args->html, args->markdown)))
      throw UsageError("--html must name a file other than --json and --markdown");
    const TraceDocument doc = load_trace(args->trace);
    std::optional<TraceDocument> baseline;
    if (args->baseline) baseline = load_trace(*args->baseline);
    const evidence::EvidencePacket packet =
        build_evidence(doc, baseline ? &*baseline : nullptr, args->nsight_dir);
    const std::filesystem::path base = args->baseline.value_or(args->trace);
    // The page first: when the front end is not bundled this fails before any file is written.
    std::string html;
    if (args->html) html = viewer::render_evidence_html(viewer::project(packet));
    emit_json(args->json, {args->trace, base},
              [&](output::JsonStream& w) { evidence::write_evidence_packet(w, packet); });
    const evidence::ReportDigest digest = evidence::make_report_digest(packet);
    emit_output(
        args->markdown,
        evidence::render_markdown(packet) + evidence::render_report_sections(packet, digest),
        {args->trace, base});
    if (args->html) emit_output(*args->html, html, {args->trace, base});
    if (args->headline) {
      std::string text = evidence::render_headline(packet, digest);
      text += "\nOutputs:\n";
      text += "  evidence  " + args->json.string() + "\n";
      text += "  report    " + args->markdown.string() + "\n";
      if (args->html) {
        text += "  viewer    " + args->html->string() + "\n";
        text += "Open the viewer: xdg-open " + report_shell_word(args->html->string()) + "\n";
      }
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
    }
    return kExitOk;
  };
}

}  // namespace candle_graph::cli
