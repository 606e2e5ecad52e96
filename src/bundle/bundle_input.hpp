// Bundles as inputs: a command given a bundle directory where it expects a trace reads the
// bundle's trace.jsonl (and its nsight/ files), but only after the bundle verified.
#pragma once

#include <filesystem>
#include <optional>

namespace candle_graph::bundle {

// True when `path` is a directory holding a bundle.json (verified or not).
bool is_bundle_dir(const std::filesystem::path& path);

struct BundleInput {
  std::filesystem::path trace;
  std::optional<std::filesystem::path> nsight_dir;
};

// Verifies the bundle (hashes, no semantic rebuild) and returns where its inputs are. Throws
// candle_graph::Error naming the bundle and its findings when it does not verify.
BundleInput open_verified_bundle(const std::filesystem::path& dir);

}  // namespace candle_graph::bundle
