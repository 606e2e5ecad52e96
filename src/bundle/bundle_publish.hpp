// `report --bundle DIR`: publication of an evidence bundle. Everything is written into a sibling
// staging directory (`.NAME.staging-HOST-PID-XXXXXX` next to DIR, bundle_staging.hpp), verified
// there, fsynced, and renamed to DIR in one step that refuses an existing DIR; any failure removes
// the staging directory, so a bundle either exists complete and verified or not at all. What a
// killed publication left is removed by the next publication of DIR.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "bundle/bundle_manifest.hpp"
#include "candle_graph/importer.hpp"
#include "candle_graph/trace.hpp"

namespace candle_graph::bundle {

struct PublishRequest {
  std::filesystem::path destination;
  std::filesystem::path trace;                      // copied byte for byte to trace.jsonl
  std::optional<std::filesystem::path> baseline;    // copied to baseline.jsonl
  std::optional<std::filesystem::path> nsight_dir;  // its regular files copied flat to nsight/
  // Progress while reading the trace, and --step of a PyTorch trace (whose bundle holds the
  // trace/6 it is imported to).
  ImportOptions import;
  // Called with each staging directory of a killed earlier publication that was removed.
  std::function<void(const std::filesystem::path&)> removed_stale_staging;
};

// The publication steps, in order. Setting the environment variable CG_BUNDLE_FAIL_AT to one of
// these names makes publication fail at that step (tests prove that nothing is left behind).
inline constexpr const char* kPublishSteps[] = {"stage",    "trace",  "baseline", "nsight",
                                                "evidence", "report", "viewer",   "manifest",
                                                "verify",   "fsync",  "rename"};

// Throws candle_graph::Error on failure (the destination then does not exist), and
// output::RefusedDestination when DIR exists or lies inside another bundle.
BundleManifest publish_bundle(const PublishRequest& request);

}  // namespace candle_graph::bundle
