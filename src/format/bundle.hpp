// The evidence bundle's layout (candle-graph/bundle/1): its schema ids, the manifest's name and
// the names of the files a bundle holds. The bundle stage writes and verifies bundles; the output
// stage's write guard recognises one by its manifest. Constants only.
#pragma once

#include <cstdint>
#include <string_view>

namespace candle_graph::format::bundle {

inline constexpr std::string_view kSchema = "candle-graph/bundle/1";
inline constexpr std::string_view kVerificationSchema = "candle-graph/bundle-verification/1";
inline constexpr std::string_view kManifestName = "bundle.json";
inline constexpr std::string_view kTraceName = "trace.jsonl";
inline constexpr std::string_view kBaselineName = "baseline.jsonl";
inline constexpr std::string_view kEvidenceName = "evidence.json";
inline constexpr std::string_view kReportName = "report.md";
inline constexpr std::string_view kViewerName = "viewer.html";
inline constexpr std::string_view kNsightDirName = "nsight";

// How far into bundle.json the schema is looked for when deciding whether a directory is a
// bundle (the manifest writes it as its first member).
inline constexpr std::uint64_t kSchemaProbeBytes = 64 * 1024;

}  // namespace candle_graph::format::bundle
