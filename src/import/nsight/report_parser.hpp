// One nsys stats output file → normalised, capped rows (trace6.md §10.3 step 3, §10.4). Streams the
// file: only the rows the caps keep are held, plus totals and NVTX join counters.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "import/nsight/nsight_evidence.hpp"
#include "import/nsight/report_header.hpp"

namespace candle_graph::import::nsight {

inline constexpr std::size_t kSummaryRowCap = 100;   // trace6.md §10.4
inline constexpr std::size_t kTimelineRowCap = 500;  // trace6.md §10.4

// One report found in a file (a stdout capture may hold several, separated by blank lines).
struct ParsedSection {
  ReportKind kind = ReportKind::kernel_summary;
  std::string limit_key;  // file name; `{file name} [{report}]` for later sections of a file
  std::uint64_t header_line = 0;
  std::vector<NsightSummaryRow> summary;    // summary kinds except memory size
  std::vector<NsightSizeRow> sizes;         // memory-size summary
  std::vector<NsightTimelineRow> timeline;  // timeline kinds
  std::uint64_t total_rows = 0;             // rows before the cap
  // NVTX join counters over *all* rows, not only the displayed ones (trace6.md §10.3).
  std::uint64_t matched_ranges = 0;
  bool every_range_has_gpu_operations = true;

  NsightLimit limit() const;
};

struct ParseOptions {
  bool csv_extension = true;  // `.csv`: an unrecognised file is a diagnostic, not silently skipped
  const std::unordered_set<std::string>* expected_keys = nullptr;
};

// Throws candle_graph::Error (path, line, message) when the file is malformed; the caller turns
// that into a diagnostic. Returns no sections for a non-CSV file without any report header.
std::vector<ParsedSection> parse_report_file(const std::filesystem::path& path,
                                             const ParseOptions& options);

}  // namespace candle_graph::import::nsight
