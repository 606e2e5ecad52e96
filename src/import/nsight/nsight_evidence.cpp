// NsightEvidence construction: `unavailable`, `load` and `load_optional` (trace6.md §10.1–§10.3).
// Nothing here throws to the caller: every failure becomes a status, a reason or a diagnostic.
#include "import/nsight/nsight_evidence.hpp"

#include <algorithm>
#include <fstream>
#include <unordered_set>

#include "candle_graph/error.hpp"
#include "import/nsight/report_parser.hpp"

namespace candle_graph::import::nsight {
namespace {

namespace fs = std::filesystem;

// Files that may hold `nsys stats` output: CSV exports and captured stdout.
bool is_stdout_capture(const fs::path& p) {
  const auto ext = p.extension().string();
  return ext == ".txt" || ext == ".log" || ext == ".out";
}

// trace6.md §10.3 step 4: the text after `reason=` on the first such line of status.txt.
std::optional<std::string> status_reason(const fs::path& dir) {
  std::ifstream in(dir / "status.txt");
  std::string line;
  while (in && std::getline(in, line)) {
    const auto at = line.find("reason=");
    if (at == std::string::npos) continue;
    std::string reason = line.substr(at + 7);
    while (!reason.empty() && (reason.back() == '\r' || reason.back() == ' ')) reason.pop_back();
    return reason;
  }
  return std::nullopt;
}

void set_coverage(NsightCoverage& c, ReportKind kind) {
  switch (kind) {
    case ReportKind::kernel_summary:
      c.kernel_summary = true;
      break;
    case ReportKind::api_summary:
      c.runtime_summary = true;
      break;
    case ReportKind::memory_time_summary:
      c.memory_summary = true;
      break;
    case ReportKind::memory_size_summary:
      c.memory_size_summary = true;
      break;
    case ReportKind::gpu_trace:
      c.gpu_timeline = true;
      break;
    case ReportKind::nvtx_projected_trace:
      c.nvtx_projection = true;
      break;
    case ReportKind::nvtx_pushpop_trace:
      c.nvtx_host_ranges = true;
      break;
    case ReportKind::nvtx_summary:
      c.nvtx_summary = true;
      break;
  }
}

template <typename Row>
void append(std::vector<Row>& to, std::vector<Row>& from) {
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

// Rows of one successfully parsed section go into the packet (trace6.md §10.3 step 3).
bool absorb(NsightEvidence& e, ParsedSection& s) {
  const bool any = !s.summary.empty() || !s.sizes.empty() || !s.timeline.empty();
  set_coverage(e.coverage, s.kind);
  e.limits[s.limit_key] = s.limit();
  switch (s.kind) {
    case ReportKind::kernel_summary:
      append(e.kernels, s.summary);
      break;
    case ReportKind::api_summary:
      append(e.runtime_calls, s.summary);
      break;
    case ReportKind::memory_time_summary:
      append(e.memory_operations, s.summary);
      break;
    case ReportKind::nvtx_summary:
      append(e.nvtx_summary, s.summary);
      break;
    case ReportKind::memory_size_summary:
      append(e.memory_sizes, s.sizes);
      break;
    case ReportKind::gpu_trace:
      append(e.gpu_timeline, s.timeline);
      break;
    case ReportKind::nvtx_projected_trace:
      append(e.nvtx_ranges, s.timeline);
      break;
    case ReportKind::nvtx_pushpop_trace:
      append(e.nvtx_host_ranges, s.timeline);
      break;
  }
  return any;
}

// trace6.md §10.3 step 5. Counts cover every projected row read, not only the displayed (capped)
// ones.
NsightCorrelation correlate(std::uint64_t matched, std::uint64_t total, bool all_gpu_ops) {
  NsightCorrelation c;
  c.mode = "nvtx_projected_range";
  c.clock_aligned = false;
  c.matched_ranges = matched;
  c.total_ranges = total;
  c.complete = total > 0 && matched == total && all_gpu_ops;
  if (c.complete) {
    c.reason =
        "Every projected NVTX range matched an exact application semantic label; Candle and "
        "Nsight clocks remain separate";
  } else {
    c.reason = std::to_string(matched) + "/" + std::to_string(total) +
               " projected NVTX ranges matched exact application semantic labels; clocks remain "
               "separate";
  }
  return c;
}

// trace6.md §10.3 `load`: throws candle_graph::Error only for directory-level failures.
NsightEvidence load(const fs::path& dir, const std::vector<std::string>& expected_keys) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    throw Error("Nsight report directory does not exist: " + dir.string());
  }
  if (!fs::is_directory(dir, ec)) {
    throw Error("Nsight report path is not a directory: " + dir.string());
  }
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (it->is_regular_file(type_ec)) files.push_back(it->path());
  }
  if (ec) throw Error("cannot list Nsight report directory " + dir.string() + ": " + ec.message());
  std::sort(files.begin(), files.end());  // trace6.md §10.3 step 1: sorted by path

  NsightEvidence e = unavailable("No supported nsys stats CSV reports were found");
  const std::unordered_set<std::string> expected(expected_keys.begin(), expected_keys.end());
  std::uint64_t matched = 0;
  std::uint64_t total = 0;
  bool all_gpu_ops = true;
  bool any_rows = false;

  for (const auto& file : files) {
    if (file.extension() == ".nsys-rep") {  // referenced, never parsed
      if (!e.raw_report) e.raw_report = file.string();
      continue;
    }
    const bool csv = file.extension() == ".csv";
    if (!csv && !is_stdout_capture(file)) continue;
    ParseOptions options;
    options.csv_extension = csv;
    options.expected_keys = &expected;
    try {
      auto sections = parse_report_file(file, options);
      if (sections.empty()) continue;
      for (auto& section : sections) {
        if (section.kind == ReportKind::nvtx_projected_trace) {
          matched += section.matched_ranges;
          total += section.total_rows;
          all_gpu_ops = all_gpu_ops && section.every_range_has_gpu_operations;
        }
        any_rows = absorb(e, section) || any_rows;
      }
      e.source_csv.push_back(file.string());
    } catch (const Error& error) {
      e.diagnostics.push_back(error.what());  // "{path}:{line}: {message}"
    } catch (const std::exception& error) {
      e.diagnostics.push_back(file.string() + ": " + error.what());
    }
  }

  if (any_rows) {
    e.status = GpuEvidenceStatus::available;
    e.reason.reset();
  } else if (auto reason = status_reason(dir)) {
    e.reason = std::move(*reason);
  }
  if (e.coverage.nvtx_projection) e.correlation = correlate(matched, total, all_gpu_ops);
  return e;
}

}  // namespace

NsightEvidence unavailable(std::string reason) {
  NsightEvidence e;
  e.status = GpuEvidenceStatus::unavailable;
  e.reason = std::move(reason);
  return e;
}

NsightEvidence load_optional(const std::optional<std::filesystem::path>& dir,
                             const std::vector<std::string>& expected_keys) {
  if (!dir) return unavailable("Nsight capture was not requested");  // trace6.md §10.2
  try {
    return load(*dir, expected_keys);
  } catch (const std::exception& error) {
    NsightEvidence e = unavailable(error.what());  // trace6.md §10.2: load error → failed
    e.status = GpuEvidenceStatus::failed;
    return e;
  } catch (...) {
    NsightEvidence e = unavailable("Nsight evidence could not be loaded");
    e.status = GpuEvidenceStatus::failed;
    return e;
  }
}

}  // namespace candle_graph::import::nsight
