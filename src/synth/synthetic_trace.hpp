// A realistic, valid, trusted trace/6 of any size for tests and benchmarks: a training update of
// an N-layer network with forward/backward/optimizer step spans, module spans, ops with inputs and
// outputs, paired alloc/free memory events, tensor checkpoints, device-memory samples and
// gradients in every state. Deterministic for a seed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

namespace candle_graph::synth {

struct SynthOptions {
  std::uint64_t layers = 4;
  std::uint64_t ops_per_span = 4;
  std::uint64_t seed = 1;
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
