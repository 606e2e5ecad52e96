// `verify`: checks a bundle directory against its manifest without trusting either. Every file
// is opened relative to the bundle's directory descriptor with O_NOFOLLOW and classified with
// fstatat(AT_SYMLINK_NOFOLLOW), so verification never follows a symlink and never reads outside
// the bundle; declared sizes are checked (and bounded) before any byte is read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "bundle/bundle_manifest.hpp"

namespace candle_graph::bundle {

struct VerifyOptions {
  // Also rebuild the evidence from the retained trace (and baseline and Nsight files) and
  // compare it, and the Markdown report, byte for byte with evidence.json and report.md
  // (viewer.html is covered by its hash only).
  bool semantic = false;
  // When set, bundle.json must have this SHA-256 (the bundle's content address, printed by
  // `report --bundle`): pins the manifest itself, tool version included.
  std::optional<std::string> manifest_sha256;
  // Threads the semantic rebuild reads and analyses with (`-j`), as `import` does; the result
  // is the same whatever the number.
  unsigned threads = 1;
};

struct VerificationResult {
  std::string bundle;  // the directory as given
  bool verified = false;
  bool semantic = false;  // the semantic check was requested
  std::optional<BundleManifest> manifest;
  std::optional<std::string> manifest_sha256;  // of bundle.json as read
  std::uint64_t files_checked = 0;
  std::uint64_t bytes_hashed = 0;
  std::vector<Finding> findings;  // sorted by path, then code
};

// Never throws for anything the bundle contains; throws candle_graph::Error only when the
// machine fails (out of memory).
VerificationResult verify_bundle(const std::filesystem::path& dir, const VerifyOptions& options);

// candle-graph/bundle-verification/1 as pretty JSON text (declaration order, trailing newline).
// Pretty JSON text with the trailing newline.
std::string verification_to_json(const VerificationResult& result);

// A one-line account of the findings for error messages ("trace.jsonl: hash_mismatch, …").
std::string summarize_findings(const std::vector<Finding>& findings, std::size_t max = 5);

}  // namespace candle_graph::bundle
