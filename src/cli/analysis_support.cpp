#include "cli/analysis_support.hpp"

#include <cstdio>
#include <memory>

#include "cli/command.hpp"
#include "output/atomic_file.hpp"

namespace candle_graph::cli {

TraceDocument load_trace(const std::filesystem::path& path) {
  const std::string label = path.string();
  ReadOptions options;
  options.progress = &progress_to_stderr;
  options.progress_user = const_cast<std::string*>(&label);
  return parse_trace(path, options);
}

evidence::EvidencePacket build_evidence(const TraceDocument& doc, const TraceDocument* baseline,
                                        const std::optional<std::filesystem::path>& nsight_dir,
                                        const GraphOptions& options) {
  std::optional<Comparison> comparison;
  if (baseline) comparison = compare_documents(*baseline, doc);
  // The semantic keys (one string per measured span) are only needed to match NVTX ranges, so
  // they are not built when no Nsight directory was given.
  nsight::NsightEvidence gpu = nsight::load_optional(
      nsight_dir, nsight_dir ? evidence::expected_semantic_keys(doc) : std::vector<std::string>{});
  return evidence::make_evidence_packet(doc, std::move(gpu), std::move(comparison), options);
}

void emit_json(const std::optional<std::filesystem::path>& out,
               std::initializer_list<std::filesystem::path> inputs,
               const std::function<void(output::JsonStream&)>& write) {
  if (!out || out->empty() || *out == "-") {
    output::JsonStream w(
        [](std::string_view piece) { std::fwrite(piece.data(), 1, piece.size(), stdout); });
    write(w);
    w.finish();
    std::fflush(stdout);
    return;
  }
  for (const auto& in : inputs)
    if (output::same_file(in, *out))
      throw UsageError("refusing to write output over the input file " + in.string());
  output::AtomicFile file(*out);
  output::JsonStream w([&](std::string_view piece) { file.write(piece); });
  write(w);
  w.finish();
  file.commit();
}

void add_nsight_option(CLI::App* cmd, std::optional<std::filesystem::path>& dir) {
  cmd->add_option("--nsight-dir", dir,
                  "directory of `nsys stats --format csv` reports to add as GPU evidence");
}

std::function<int()> register_packet_command(CLI::App& app, const char* name, const char* help,
                                             const GraphOptions& options, PacketWriter write) {
  struct Args {
    std::filesystem::path trace;
    std::optional<std::filesystem::path> output;
    std::optional<std::filesystem::path> nsight_dir;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(name, help);
  cmd->add_option("TRACE", args->trace, "trace/6 JSONL file")->required();
  cmd->add_option("-o,--output", args->output, "write the JSON here instead of stdout");
  add_nsight_option(cmd, args->nsight_dir);
  return [args, options, write] {
    const TraceDocument doc = load_trace(args->trace);
    const evidence::EvidencePacket packet = build_evidence(doc, nullptr, args->nsight_dir, options);
    emit_json(args->output, {args->trace}, [&](output::JsonStream& w) { write(w, packet); });
    return static_cast<int>(kExitOk);
  };
}

}  // namespace candle_graph::cli
