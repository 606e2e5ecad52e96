// `candle-graph convert`: a PyTorch profiler trace (Kineto JSON of any layout since 2021, the
// legacy autograd profiler's array, or candle-graph's own Chrome export) -> a trace/6 JSONL
// trace that validates as trusted. Repairs are counted and reported, never silent.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace candle_graph::import {

struct ConvertOptions {
  std::optional<std::uint64_t> step;  // ProfilerStep#N to measure; default: the last complete one
  // Called after each chunk read with (bytes of the file read so far, file size) for progress on
  // long conversions (for .gz: compressed bytes).
  void (*progress)(std::uint64_t done, std::uint64_t total, void* user) = nullptr;
  void* progress_user = nullptr;
};

struct ConvertResult {
  std::string format;    // "kineto", "legacy-autograd-profiler", "candle-graph-chrome"
  std::string measured;  // the measured span's name ("ProfilerStep#3", "profiled window")
  std::uint64_t source_events = 0;
  std::uint64_t spans = 0;
  std::uint64_t ops = 0;
  std::uint64_t device_ops = 0;
  std::uint64_t memory_events = 0;
  // Everything repaired, dropped or not mapped, as ("convert.<what>", count); also in meta tags.
  std::vector<std::pair<std::string, std::uint64_t>> repairs;
};

// Reads `input` (plain or gzip), writes `output` atomically. Throws Error naming the input (and
// the byte offset for malformed JSON) when it is not a PyTorch trace or cannot be converted.
ConvertResult convert_pytorch_trace(const std::filesystem::path& input,
                                    const std::filesystem::path& output,
                                    const ConvertOptions& options = {});

}  // namespace candle_graph::import
