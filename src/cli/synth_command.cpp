// `candle-graph synth --layers N [--ops-per-span K] [--seed S] [--time-scale F] [--jitter P]
//  [--noise-seed S] [--run-id ID] [--tag K=V]... -o FILE`
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

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
      "Cohorts of runs for `compare --baseline … --candidate …`: the same --seed with another\n"
      "--noise-seed and --run-id is another run of the same workload; --time-scale makes it\n"
      "slower or faster, --jitter adds run-to-run noise (neither is written into the tags).\n"
      "Example: candle-graph synth --layers 12 -o demo.jsonl\n"
      "Example: candle-graph synth --layers 12 --time-scale 1.1 --jitter 3 --noise-seed 7 \\\n"
      "           --run-id cand-7 --tag pair_id=7 -o cand-7.jsonl");
  cmd->add_option("--layers", opts->layers, "number of layers (module spans per step)")
      ->required()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{100'000'000}));
  cmd->add_option("--ops-per-span", opts->ops_per_span, "ops per module span")
      ->default_val(4)
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1'000'000}));
  cmd->add_option("--seed", opts->seed, "random seed (same seed, same bytes)")->default_val(1);
  cmd->add_option("--time-scale", opts->time_scale,
                  "multiply every duration by F (1.1 = a run 10 % slower)")
      ->default_val(1.0)
      ->check(CLI::Range(1e-3, 1e3));
  cmd->add_option("--jitter", opts->jitter_percent,
                  "run-to-run noise in percent: a log-normal factor with this sigma for the\n"
                  "whole run, and one more per duration")
      ->default_val(0.0)
      ->check(CLI::Range(0.0, 50.0));
  cmd->add_option("--noise-seed", opts->noise_seed, "seed of the --jitter noise (one per run)")
      ->default_val(0);
  cmd->add_option("--run-id", opts->run_id, "run id of the meta event (default run-synth-SEED)");
  auto tags = std::make_shared<std::vector<std::string>>();
  cmd->add_option("--tag", *tags, "extra meta tag KEY=VALUE (repeatable), e.g. pair_id=3");
  cmd->add_option("-o,--output", *out, "trace file to write")->required();
  return [opts, out, tags] {
    for (const std::string& t : *tags) {
      const std::size_t eq = t.find('=');
      if (eq == std::string::npos || eq == 0)
        throw UsageError("--tag expects KEY=VALUE, got `" + t + "`");
      const std::string key = t.substr(0, eq);
      for (const auto& [k, v] : opts->tags)
        if (k == key) throw UsageError("--tag " + key + " given twice");
      if (key == "generator" || key == "layers" || key == "ops_per_span" || key == "seed")
        throw UsageError("--tag " + key + ": the generator writes this tag itself");
      opts->tags.emplace_back(key, t.substr(eq + 1));
    }
    const synth::SynthStats stats = synth::generate_file(*opts, *out);
    std::fprintf(stderr, "wrote %s: %llu events, %llu ops, %.1f MB\n", out->c_str(),
                 static_cast<unsigned long long>(stats.events),
                 static_cast<unsigned long long>(stats.ops),
                 static_cast<double>(stats.bytes) / 1e6);
    return kExitOk;
  };
}

}  // namespace candle_graph::cli
