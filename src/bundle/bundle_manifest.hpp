// The bundle manifest, bundle.json (`candle-graph/bundle/1`): which run, which tool, which
// schemas, and for every other file of the bundle its path, size and SHA-256. Reading a manifest
// treats it as hostile: every problem becomes a Finding, never an exception or a crash.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "format/bundle.hpp"

namespace candle_graph::bundle {

using format::bundle::kBaselineName;
using format::bundle::kEvidenceName;
using format::bundle::kManifestName;
using format::bundle::kNsightDirName;
using format::bundle::kReportName;
using format::bundle::kTraceName;
using format::bundle::kViewerName;
inline constexpr std::string_view kBundleSchema = format::bundle::kSchema;
using format::bundle::kVerificationSchema;

// Limits that keep verification bounded on a hostile bundle. No trace could be larger than
// 1 TiB (the reader holds the parsed document in memory, which needs several times the file on a
// 24 GiB machine long before that); a manifest lists a few files, so 16 MiB is generous.
inline constexpr std::uint64_t kMaxFileBytes = std::uint64_t{1} << 40;
inline constexpr std::uint64_t kMaxManifestBytes = std::uint64_t{16} << 20;
inline constexpr std::size_t kMaxFiles = 100000;

// One verification problem. `path` is bundle-relative ("" for the bundle as a whole).
struct Finding {
  std::string code;
  std::string path;
  std::string message;
};

struct ManifestFile {
  std::string path;  // bundle-relative, '/'-separated
  std::uint64_t size = 0;
  std::string sha256;  // lowercase hex
};

struct BundleManifest {
  std::string run_id;
  std::string tool_version;
  std::vector<std::pair<std::string, std::string>> schemas;  // role → schema, in order
  std::optional<std::string> baseline;                       // "baseline.jsonl" when retained
  std::optional<std::string> nsight_dir;  // "nsight" when Nsight files were given
  std::vector<ManifestFile> files;        // sorted by path, bundle.json excluded
};

// The `schemas` member of every bundle/1 manifest: role → schema of the files it holds.
std::vector<std::pair<std::string, std::string>> expected_schemas();

// Pretty JSON text of the manifest (declaration order, trailing newline).
std::string manifest_to_json(const BundleManifest& manifest);

// Why a manifest path is unsafe or malformed (absolute, `..`, `.`, empty component, backslash,
// control character, more than two components, the manifest itself), or nullopt when it is fine.
std::optional<std::string> path_problem(std::string_view path);

// Parses manifest text. On any problem returns nullopt and appends findings (code
// `manifest_malformed` for JSON that does not parse, `manifest_invalid` for a wrong shape,
// `unsafe_path`, `duplicate_path`, `size_limit`); entries with problems are dropped, others kept.
std::optional<BundleManifest> parse_manifest(std::string_view text, std::vector<Finding>& findings);

}  // namespace candle_graph::bundle
