// `candle-graph synth --layers N [--ops-per-span K] [--seed S] -o FILE`
#include <cstdio>
#include <memory>

#include "cli/command.hpp"
#include "synth/synthetic_trace.hpp"

namespace candle_graph::cli {

Runner register_synth(CLI::App& app) {
  auto opts = std::make_shared<synth::SynthOptions>();
  auto out = std::make_shared<std::filesystem::path>();
  CLI::App* cmd = app.add_subcommand(
      "synth",
      "Write a synthetic, valid and trusted trace/6 of a training update of an N-layer model:\n"
      "forward/backward/optimizer spans, module spans, ops, paired memory events, tensors,\n"
      "device-memory samples and gradients in every state. Deterministic for a seed.\n"
      "Size: about 1 KiB per layer and op-per-span (--layers 6000 --ops-per-span 4 ~ 30 MB).\n"
      "Example: candle-graph synth --layers 12 -o demo.jsonl");
  cmd->add_option("--layers", opts->layers, "number of layers (module spans per step)")
      ->required()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{100'000'000}));
  cmd->add_option("--ops-per-span", opts->ops_per_span, "ops per module span")
      ->default_val(4)
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1'000'000}));
  cmd->add_option("--seed", opts->seed, "random seed (same seed, same bytes)")->default_val(1);
  cmd->add_option("-o,--output", *out, "trace file to write")->required();
  return [opts, out] {
    const synth::SynthStats stats = synth::generate_file(*opts, *out);
    std::fprintf(stderr, "wrote %s: %llu events, %llu ops, %.1f MB\n", out->c_str(),
                 static_cast<unsigned long long>(stats.events),
                 static_cast<unsigned long long>(stats.ops),
                 static_cast<double>(stats.bytes) / 1e6);
    return kExitOk;
  };
}

}  // namespace candle_graph::cli
