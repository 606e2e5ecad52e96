// `candle-graph report TRACE [--baseline B] [--nsight-dir DIR] --json FILE --markdown FILE`:
// the evidence packet as JSON and as Markdown (§9.3, §11); with `--bundle DIR`, an evidence
// bundle (candle-graph/bundle/1) published atomically.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "bundle/bundle_input.hpp"
#include "bundle/bundle_publish.hpp"
#include "bundle/sha256.hpp"
#include "candle_graph/error.hpp"
#include "cli/analysis_support.hpp"
#include "cli/command.hpp"
#include "evidence/evidence_json.hpp"
#include "output/atomic_file.hpp"
#include "output/write_guard.hpp"

namespace candle_graph::cli {
namespace {

// Copies a published bundle file to a user-named output (atomically, through AtomicFile).
void copy_bundle_file(const std::filesystem::path& from, const std::filesystem::path& to) {
  const int fd = ::open(from.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) throw Error(from.string(), 0, std::string("cannot open: ") + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  output::AtomicFile out(to);
  std::string buf(std::size_t{1} << 20, '\0');
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(from.string(), 0, std::string("cannot read: ") + std::strerror(errno));
    if (n == 0) break;
    out.write(std::string_view(buf.data(), static_cast<std::size_t>(n)));
  }
  out.commit();
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
    std::optional<std::filesystem::path> bundle;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Write the evidence/1 packet of a trusted trace as JSON and as a Markdown report for\n"
      "humans (status, findings, gaps, coverage, tensors, gradients and, with --baseline, the\n"
      "comparison). Both files are written atomically.\n"
      "With --bundle DIR, publish an evidence bundle instead (--json/--markdown optional):\n"
      "bundle.json (candle-graph/bundle/1: run id, tool version, schemas, path, size and SHA-256\n"
      "of every file), trace.jsonl (the input, byte for byte), baseline.jsonl (with --baseline),\n"
      "evidence.json, report.md, viewer.html and nsight/ (with --nsight-dir). It is staged next\n"
      "to DIR, verified, fsynced and renamed into place; an existing DIR is refused. Check it\n"
      "later with `candle-graph verify DIR`.\n"
      "Exit: 0 ok, 1 unreadable or untrusted trace or I/O error, 2 usage error (also: DIR\n"
      "      exists, or an output lies inside a bundle).\n"
      "Example: candle-graph report run/trace.jsonl --baseline main/trace.jsonl \\\n"
      "           --json run/evidence.json --markdown run/evidence.md\n"
      "Example: candle-graph report run/trace.jsonl --nsight-dir run/nsys --bundle "
      "evidence/run-42");
  cmd->add_option("TRACE", args->trace, "trace/6 JSONL file (or verified bundle directory)")
      ->required();
  cmd->add_option("--baseline", args->baseline,
                  "trace/6 JSONL (or bundle) of a run to compare against");
  add_nsight_option(cmd, args->nsight_dir);
  cmd->add_option("--json", args->json, "where to write the evidence JSON");
  cmd->add_option("--markdown", args->markdown, "where to write the Markdown report");
  cmd->add_option("--bundle", args->bundle,
                  "publish an evidence bundle into this new directory (must not exist)");
  return [args] {
    if (!args->bundle && (!args->json || !args->markdown))
      throw UsageError("report needs --json FILE and --markdown FILE (or --bundle DIR)");
    if (args->json && args->markdown &&
        (output::same_file(*args->json, *args->markdown) || *args->json == *args->markdown))
      throw UsageError("--json and --markdown must name different files");
    if (args->bundle) {
      // Refused before anything is published: copies that would land in a bundle.
      const auto dest = std::filesystem::weakly_canonical(std::filesystem::absolute(*args->bundle));
      for (const auto& out : {args->json, args->markdown}) {
        if (!out) continue;
        output::refuse_inside_bundle(*out);
        const auto at = std::filesystem::weakly_canonical(std::filesystem::absolute(*out));
        const auto rel = at.lexically_relative(dest);
        if (!rel.empty() && *rel.begin() != "..")
          throw UsageError(out->string() + ": refusing to write inside the evidence bundle " +
                           args->bundle->string() + " (bundles never change after publication)");
      }
      bundle::PublishRequest req;
      req.destination = *args->bundle;
      req.trace = report_trace_file(args->trace);
      if (args->baseline) req.baseline = report_trace_file(*args->baseline);
      req.nsight_dir = nsight_dir_for(args->trace, args->nsight_dir);
      const std::string label = req.trace.string();
      req.read.progress = &progress_to_stderr;
      req.read.progress_user = const_cast<std::string*>(&label);
      const bundle::BundleManifest m = bundle::publish_bundle(req);
      if (args->json) copy_bundle_file(*args->bundle / bundle::kEvidenceName, *args->json);
      if (args->markdown) copy_bundle_file(*args->bundle / bundle::kReportName, *args->markdown);
      std::fprintf(stderr, "published bundle %s (run %s, manifest sha256 %s)\n",
                   args->bundle->string().c_str(), m.run_id.c_str(),
                   bundle::sha256_hex(bundle::manifest_to_json(m)).c_str());
      return kExitOk;
    }
    const TraceDocument doc = load_trace(args->trace);
    std::optional<TraceDocument> baseline;
    if (args->baseline) baseline = load_trace(*args->baseline);
    const evidence::EvidencePacket packet = build_evidence(
        doc, baseline ? &*baseline : nullptr, nsight_dir_for(args->trace, args->nsight_dir));
    const std::filesystem::path base = args->baseline.value_or(args->trace);
    emit_json(*args->json, {args->trace, base},
              [&](output::JsonStream& w) { evidence::write_evidence_packet(w, packet); });
    emit_output(*args->markdown, evidence::render_markdown(packet), {args->trace, base});
    return kExitOk;
  };
}

}  // namespace candle_graph::cli
