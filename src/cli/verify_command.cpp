// `candle-graph verify DIR [--semantic] [-o FILE]`: candle-graph/bundle-verification/1.
#include <cstdio>
#include <memory>

#include "bundle/bundle_verify.hpp"
#include "bundle/sha256.hpp"
#include "cli/analysis_support.hpp"
#include "cli/command.hpp"
#include "output/visible_text.hpp"

namespace candle_graph::cli {

Runner register_verify(CLI::App& app) {
  struct Args {
    std::filesystem::path dir;
    bool semantic = false;
    std::optional<std::string> manifest_sha256;
    std::optional<std::filesystem::path> output;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "verify",
      "Check an evidence bundle (written by `report --bundle`) against its manifest: every\n"
      "declared file is re-hashed (SHA-256) and size-checked; extra, missing, changed, symlinked\n"
      "or non-regular files are findings, each naming its path, and so is a hostile or broken\n"
      "manifest (malformed JSON, `..` or absolute paths, a path listed twice, a size that lies,\n"
      "a file larger than any trace could be). Nothing outside DIR is read and no symlink is\n"
      "followed. --semantic also rebuilds the evidence from the retained trace (and baseline and\n"
      "Nsight files) and requires evidence.json and report.md to equal it (viewer.html is\n"
      "covered by its hash).\n"
      "Prints candle-graph/bundle-verification/1 JSON: verified, findings [{code, path, "
      "message}].\n"
      "Exit: 0 verified, 1 not verified (or I/O error), 2 usage error.\n"
      "Example: candle-graph verify evidence/run-42 --semantic | jq .findings");
  // (`report --bundle` prints the manifest's SHA-256 on stderr; pin it with --manifest-sha256.)
  cmd->add_option("DIR", args->dir, "bundle directory")->required();
  cmd->add_flag("--semantic", args->semantic,
                "also rebuild the evidence from the retained inputs and compare");
  cmd->add_option("--manifest-sha256", args->manifest_sha256,
                  "require bundle.json to have this SHA-256 (the content address `report\n"
                  "--bundle` prints), which also pins the manifest's run id and tool version");
  cmd->add_option("-o,--output", args->output, "write the JSON here instead of stdout");
  add_threads_option(cmd);
  return [args] {
    if (args->manifest_sha256 && !bundle::is_sha256_hex(*args->manifest_sha256))
      throw UsageError("--manifest-sha256 needs 64 lowercase hex digits");
    const bundle::VerificationResult r =
        bundle::verify_bundle(args->dir, {.semantic = args->semantic,
                                          .manifest_sha256 = args->manifest_sha256,
                                          .threads = read_threads()});
    emit_output(args->output, bundle::verification_to_json(r), {});
    if (!r.verified)
      std::fprintf(stderr, "error: %s: bundle not verified: %s\n", args->dir.string().c_str(),
                   output::visible_text(bundle::summarize_findings(r.findings)).c_str());
    return r.verified ? kExitOk : kExitRuntime;
  };
}

}  // namespace candle_graph::cli
