// `candle-graph report TRACE [--baseline B] [--nsight-dir DIR] --json FILE --markdown FILE
// [--html FILE] [--headline]`: the evidence packet as JSON and as Markdown (trace6.md §9.3, §11,
// plus the added sections of report_digest.hpp), optionally the viewer of the same packet, and the
// report's top lines on stdout. With `--bundle DIR`: an evidence bundle (candle-graph/bundle/1)
// published atomically, holding the same files.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "bundle/bundle_input.hpp"
#include "bundle/bundle_publish.hpp"
#include "bundle/sha256.hpp"
#include "candle_graph/error.hpp"
#include "cli/analysis_support.hpp"
#include "cli/command.hpp"
#include "cli/standard_output.hpp"
#include "compare/comparison_parts.hpp"
#include "evidence/evidence_json.hpp"
#include "evidence/report_digest.hpp"
#include "output/atomic_file.hpp"
#include "output/output_group.hpp"
#include "output/visible_text.hpp"
#include "output/write_guard.hpp"
#include "viewer/html_document.hpp"
#include "viewer/viewer_page.hpp"
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

// Copies a published bundle file to a user-named output of `outputs` (atomically, with the
// others).
void copy_bundle_file(const std::filesystem::path& from, const std::filesystem::path& to,
                      output::OutputGroup& outputs) {
  const int fd = ::open(from.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) throw Error(from.string(), 0, std::string("cannot open: ") + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  output::AtomicFile& out = outputs.open(to);
  std::string buf(std::size_t{1} << 20, '\0');
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(from.string(), 0, std::string("cannot read: ") + std::strerror(errno));
    if (n == 0) break;
    out.write(std::string_view(buf.data(), static_cast<std::size_t>(n)));
  }
}

// A trace argument that names a bundle stands for the bundle's (verified) trace.jsonl.
std::filesystem::path report_trace_file(const std::filesystem::path& path) {
  if (!bundle::is_bundle_dir(path)) return path;
  return bundle::open_verified_bundle(path).trace;
}

}  // namespace

Runner register_report(CLI::App& app) {
  struct Args {
    std::filesystem::path trace;
    std::optional<std::filesystem::path> baseline;
    std::optional<std::filesystem::path> nsight_dir;
    std::optional<std::filesystem::path> json;
    std::optional<std::filesystem::path> markdown;
    std::optional<std::filesystem::path> html;
    std::optional<std::filesystem::path> bundle;
    std::string step;
    bool headline = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Write the evidence/1 packet of a trusted trace as JSON and as a Markdown report for\n"
      "humans: the original's sections (status, findings, gaps, coverage, tensors, gradients,\n"
      "baseline comparison), then where the time went (top ops by self time), memory at the\n"
      "peak, GPU (with --nsight-dir), GPU from the trace (when it recorded kernels: busy and\n"
      "idle time and why, kernel types, launches, sync stalls, the kernels and the ops that\n"
      "launched them), profiler steps (PyTorch traces) and against the baseline (with\n"
      "--baseline). TRACE may be a PyTorch profiler trace: --step N|all picks the region.\n"
      "Outputs, any of them (at least one): --json the evidence, --markdown the report, --html\n"
      "the viewer of the same packet, --headline the report's top lines and the output paths on\n"
      "stdout. Every file is written atomically, and none is in place until all are written.\n"
      "With --bundle DIR, publish an evidence bundle instead (--json/--markdown/--html then\n"
      "optional copies): bundle.json (candle-graph/bundle/1: run id, tool version, schemas, path,\n"
      "size and SHA-256 of every file), trace.jsonl (the input, byte for byte), baseline.jsonl\n"
      "(with --baseline), evidence.json, report.md, viewer.html and nsight/ (with --nsight-dir).\n"
      "It is staged next to DIR, verified, fsynced and renamed into place; an existing DIR is\n"
      "refused. Check it later with `candle-graph verify DIR`.\n"
      "Exit: 0 ok, 1 unreadable or untrusted trace or I/O error, 2 usage error (also: DIR\n"
      "      exists, or an output lies inside a bundle).\n"
      "Example: candle-graph report run/trace.jsonl --baseline main/trace.jsonl \\\n"
      "           --json run/evidence.json --markdown run/report.md --html run/viewer.html \\\n"
      "           --headline\n"
      "Example: candle-graph report run/trace.jsonl --nsight-dir run/nsys --bundle "
      "evidence/run-42");
  cmd->add_option("TRACE", args->trace, kTraceInputHelp)->required();
  cmd->add_option("--baseline", args->baseline,
                  "a trace of a run to compare against (any trace format, or a bundle)");
  add_nsight_option(cmd, args->nsight_dir);
  cmd->add_option("--json", args->json, "where to write the evidence JSON");
  cmd->add_option("--markdown", args->markdown, "where to write the Markdown report");
  cmd->add_option("--html", args->html, "where to write the HTML viewer of the same packet");
  add_step_option(cmd, args->step);
  add_threads_option(cmd);
  cmd->add_flag("--headline", args->headline,
                "print the trust verdict, measured total, three heaviest ops, peak memory and the "
                "output paths to stdout");
  cmd->add_option("--bundle", args->bundle,
                  "publish an evidence bundle into this new directory (must not exist)");
  return [args] {
    if (!args->bundle && !args->json && !args->markdown && !args->html && !args->headline)
      throw UsageError(
          "report needs an output: any of --json FILE, --markdown FILE, --html FILE and "
          "--headline, or --bundle DIR");
    const std::vector<std::filesystem::path> outs = [&] {
      std::vector<std::filesystem::path> v;
      for (const auto& o : {args->json, args->markdown, args->html})
        if (o) v.push_back(*o);
      return v;
    }();
    for (std::size_t i = 0; i < outs.size(); ++i)
      for (std::size_t j = i + 1; j < outs.size(); ++j)
        if (outs[i] == outs[j] || output::same_file(outs[i], outs[j]))
          throw UsageError("--json, --markdown and --html must name different files");
    if (args->bundle) {
      if (args->headline)
        throw UsageError("--headline is not available with --bundle; run `candle-graph report " +
                         args->bundle->string() + " --headline` afterwards");
      // Refused before anything is published: copies that would land in a bundle.
      const auto dest = std::filesystem::weakly_canonical(std::filesystem::absolute(*args->bundle));
      for (const auto& out : outs) {
        output::refuse_inside_bundle(out);
        const auto at = std::filesystem::weakly_canonical(std::filesystem::absolute(out));
        const auto rel = at.lexically_relative(dest);
        if (!rel.empty() && *rel.begin() != "..")
          throw UsageError(out.string() + ": refusing to write inside the evidence bundle " +
                           args->bundle->string() + " (bundles never change after publication)");
      }
      bundle::PublishRequest req;
      req.destination = *args->bundle;
      req.trace = report_trace_file(args->trace);
      if (args->baseline) req.baseline = report_trace_file(*args->baseline);
      req.nsight_dir = nsight_dir_for(args->trace, args->nsight_dir);
      req.import = import_options(args->step, req.trace.string());
      req.removed_stale_staging = [](const std::filesystem::path& p) {
        std::fprintf(stderr, "removed %s, left by an earlier publication that was killed\n",
                     p.string().c_str());
      };
      const bundle::BundleManifest m = bundle::publish_bundle(req);
      output::OutputGroup copies;
      if (args->json) copy_bundle_file(*args->bundle / bundle::kEvidenceName, *args->json, copies);
      if (args->markdown)
        copy_bundle_file(*args->bundle / bundle::kReportName, *args->markdown, copies);
      if (args->html) copy_bundle_file(*args->bundle / bundle::kViewerName, *args->html, copies);
      copies.commit();
      std::fprintf(stderr, "published bundle %s (run %s, manifest sha256 %s)\n",
                   args->bundle->string().c_str(), output::visible_text(m.run_id).c_str(),
                   bundle::sha256_hex(bundle::manifest_to_json(m)).c_str());
      return kExitOk;
    }
    const TraceDocument doc = load_trace(args->trace, args->step);
    std::optional<TraceDocument> baseline;
    if (args->baseline) {
      baseline = load_trace(*args->baseline, args->step);
      evidence::check_span_keys_fit(*baseline, args->baseline->string());
      evidence::check_span_keys_fit(doc, args->trace.string());
    }
    const evidence::EvidencePacket packet =
        analyse_trace(doc, args->trace, baseline ? &*baseline : nullptr,
                      nsight_dir_for(args->trace, args->nsight_dir));
    const std::filesystem::path base = args->baseline.value_or(args->trace);
    // The page first: when the front end is not bundled this fails before any file is written.
    std::string html;
    if (args->html)
      html = rendered("the viewer " + args->html->string(), args->trace,
                      [&] { return viewer::render_viewer(packet); });
    output::OutputGroup outputs;
    if (args->json)
      emit_json(
          *args->json, {args->trace, base},
          [&](output::JsonStream& w) { evidence::write_evidence_packet(w, packet); }, &outputs,
          evidence::evidence_packet_elements(packet));
    evidence::ReportDigest digest;
    if (args->markdown)
      emit_output(*args->markdown,
                  rendered("the report " + args->markdown->string(), args->trace,
                           [&] {
                             digest = evidence::make_report_digest(packet);
                             return evidence::render_markdown(packet) +
                                    evidence::render_report_sections(packet, digest);
                           }),
                  {args->trace, base}, &outputs);
    else if (args->headline)
      digest = evidence::make_report_digest(packet);
    if (args->html) emit_output(*args->html, html, {args->trace, base}, &outputs);
    outputs.commit();
    if (args->headline) {
      std::string text = evidence::render_headline(packet, digest);
      if (args->json || args->markdown || args->html) text += "\nOutputs:\n";
      if (args->json) text += "  evidence  " + args->json->string() + "\n";
      if (args->markdown) text += "  report    " + args->markdown->string() + "\n";
      if (args->html) {
        text += "  viewer    " + args->html->string() + "\n";
        text += "Open the viewer: xdg-open " + report_shell_word(args->html->string()) + "\n";
      }
      write_stdout(text);
      flush_stdout();
    }
    return kExitOk;
  };
}

}  // namespace candle_graph::cli
