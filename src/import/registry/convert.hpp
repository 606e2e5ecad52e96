// `candle-graph convert`: a PyTorch profiler trace (Kineto JSON of any layout since 2021, the
// legacy autograd profiler's array, or candle-graph's own Chrome export) -> a trace/6 JSONL
// trace that validates as trusted. Repairs are counted and reported, never silent.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "candle_graph/importer.hpp"

namespace candle_graph::import {

// The import's report and what the written trace holds.
struct ConvertResult : ImportReport {
  std::uint64_t spans = 0;
  std::uint64_t ops = 0;
  std::uint64_t device_ops = 0;  // ops on a device other than the host (`cpu`)
  std::uint64_t memory_events = 0;
};

// Reads `input` (plain or gzip) with the Chrome-export importer when it recognises the file, else
// the PyTorch importer, and writes `output` atomically. Throws Error naming the input (and the
// byte offset for malformed JSON) when it is not a PyTorch trace or cannot be converted; a
// refused output names the output.
ConvertResult convert_pytorch_trace(const std::filesystem::path& input,
                                    const std::filesystem::path& output,
                                    const ImportOptions& options = {});

}  // namespace candle_graph::import
