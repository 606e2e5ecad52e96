// A realistic, valid, trusted trace/6 of any size for tests and benchmarks: a training update of
// an N-layer network with forward/backward/optimizer step spans, module spans, ops with inputs and
// outputs, paired alloc/free memory events, tensor checkpoints, device-memory samples and
// gradients in every state. Deterministic for a seed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace candle_graph::synth {

struct SynthOptions {
  std::uint64_t layers = 4;
  std::uint64_t ops_per_span = 4;
  std::uint64_t seed = 1;  // the structure, the durations drawn and the gradient norms
  // Cohort runs: the same structure with other timings. The defaults leave the output
  // byte-identical to a generator without these options.
  double time_scale = 1.0;       // multiplies every drawn duration (so every span grows by it)
  double jitter_percent = 0.0;   // log-normal noise, sigma in percent: one factor for the run,
                                 // one more per duration (drawn from noise_seed, not seed)
  std::uint64_t noise_seed = 0;  // seeds the jitter; a different run, a different draw
  std::string run_id{};          // empty: `run-synth-<seed>`
  std::vector<std::pair<std::string, std::string>> tags{};  // more meta tags (unique keys)
};

struct SynthStats {
  std::uint64_t events = 0;
  std::uint64_t bytes = 0;
  std::uint64_t ops = 0;
};

// Streams the trace into `sink` in pieces of about 1 MiB.
SynthStats generate(const SynthOptions& options, const std::function<void(std::string_view)>& sink);
// Writes it atomically to `path`.
SynthStats generate_file(const SynthOptions& options, const std::filesystem::path& path);

}  // namespace candle_graph::synth
