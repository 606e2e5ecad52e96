// libFuzzer target for the Nsight Systems `nsys stats` reader: one file, under one of the names
// that select a report layout (or none, or a stdout capture), in an otherwise empty Nsight
// directory. Loading never throws (a bad file becomes a diagnostic); the rows kept stay within
// their caps; and the `gpu` member written from it is valid JSON. The same bytes also build a
// report in nsys's own layout (generated_nsight.hpp), which must be read without a diagnostic
// and give back the rows it holds, as written: names exact, times converted to ns, the rows
// without a name skipped and counted out, the summaries cut to their cap.
//
// Input: one control byte choosing the file name, then the file.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"
#include "generated_nsight.hpp"
#include "import/nsight/nsight_evidence.hpp"
#include "import/nsight/report_parser.hpp"
#include "output/json_stream.hpp"

namespace {

namespace fuzz = candle_graph::fuzz;
namespace nsight = candle_graph::import::nsight;

// Every file-name hint of report_header.cpp, a CSV without one, and stdout captures.
constexpr std::array<const char*, 19> kNames = {"run_cuda_gpu_kern_sum.csv",
                                                "run_gpukernsum.csv",
                                                "run_cuda_api_sum.csv",
                                                "run_cudaapisum.csv",
                                                "run_cuda_gpu_mem_time_sum.csv",
                                                "run_gpumemtimesum.csv",
                                                "run_cuda_gpu_mem_size_sum.csv",
                                                "run_gpumemsizesum.csv",
                                                "run_nvtx_gpu_proj_trace.csv",
                                                "run_cuda_gpu_trace.csv",
                                                "run_gputrace.csv",
                                                "run_nvtx_pushpop_trace.csv",
                                                "run_nvtx_pushpop_sum.csv",
                                                "run_nvtxppsum.csv",
                                                "run_nvtx_sum.csv",
                                                "run_nvtxsum.csv",
                                                "report.csv",
                                                "stats.txt",
                                                "nsys-stdout.log"};

void check_caps(const nsight::NsightEvidence& e) {
  const auto over = [](std::size_t rows, std::size_t per_file, std::size_t files) {
    return rows > per_file * (files == 0 ? 1 : files);
  };
  const std::size_t files = e.limits.size();
  if (over(e.kernels.size(), nsight::kSummaryRowCap, files) ||
      over(e.runtime_calls.size(), nsight::kSummaryRowCap, files) ||
      over(e.memory_operations.size(), nsight::kSummaryRowCap, files) ||
      over(e.nvtx_summary.size(), nsight::kSummaryRowCap, files) ||
      over(e.memory_sizes.size(), nsight::kSummaryRowCap, files) ||
      over(e.nvtx_ranges.size(), nsight::kTimelineRowCap, files) ||
      over(e.gpu_timeline.size(), nsight::kTimelineRowCap, files) ||
      over(e.nvtx_host_ranges.size(), nsight::kTimelineRowCap, files))
    fuzz::fail("more rows kept than the caps allow", "");
  for (const auto& [key, limit] : e.limits) {
    if (limit.displayed_rows > limit.total_rows ||
        limit.truncated != (limit.displayed_rows < limit.total_rows))
      fuzz::fail("an inconsistent row limit", key);
  }
}

using Written = fuzz::NsightReportWritten;

bool same_row(const nsight::NsightSummaryRow& got, const fuzz::NsightRowWritten& want) {
  return got.name == want.name && got.total_ns == want.total_ns && got.count == want.count &&
         got.average_ns == want.average_ns && got.minimum_ns == want.minimum_ns &&
         got.maximum_ns == want.maximum_ns;
}

bool same_row(const nsight::NsightTimelineRow& got, const fuzz::NsightRowWritten& want,
              Written::Kind kind) {
  if (got.name != want.name || got.start_ns != want.start_ns || got.duration_ns != want.duration_ns)
    return false;
  return kind != Written::Kind::gpu_trace ||
         (got.correlation_id == want.correlation && got.stream == want.stream &&
          got.device == want.device);
}

// Every row kept is a row written, each written row matched once.
template <typename Row, typename Same>
void check_rows_read_back(const std::vector<Row>& got, const Written& report, std::size_t cap,
                          Same same) {
  fuzz::law(got.size() == std::min(report.rows.size(), cap), "rows kept", got.size(),
            report.rows.size());
  std::vector<bool> used(report.rows.size(), false);
  for (const Row& row : got) {
    bool found = false;
    for (std::size_t i = 0; i < report.rows.size() && !found; ++i)
      if (!used[i] && same(row, report.rows[i])) used[i] = found = true;
    if (!found) fuzz::fail("a row read is not a row written", row.name + "\n" + report.text);
  }
}

void check_generated(const Written& report) {
  const std::filesystem::path dir = fuzz::scratch_dir() / "nsight-generated";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directory(dir);
  fuzz::write_scratch("nsight-generated/" + report.file_name, report.text);
  const nsight::NsightEvidence e = nsight::load_optional(dir, {"forward"});
  if (!e.diagnostics.empty())
    fuzz::fail("a report in nsys's layout was refused", e.diagnostics.front() + "\n" + report.text);
  if (report.rows.empty()) return;
  if (e.limits.size() != 1) fuzz::fail("one file, one row limit", report.text);
  const nsight::NsightLimit& limit = e.limits.begin()->second;
  fuzz::law(limit.total_rows == report.rows.size(), "rows counted", limit.total_rows,
            report.rows.size());
  const auto summary = [&](const nsight::NsightSummaryRow& a, const fuzz::NsightRowWritten& b) {
    return same_row(a, b);
  };
  const auto timeline = [&](const nsight::NsightTimelineRow& a, const fuzz::NsightRowWritten& b) {
    return same_row(a, b, report.kind);
  };
  switch (report.kind) {
    case Written::Kind::kernels:
      return check_rows_read_back(e.kernels, report, nsight::kSummaryRowCap, summary);
    case Written::Kind::runtime:
      return check_rows_read_back(e.runtime_calls, report, nsight::kSummaryRowCap, summary);
    case Written::Kind::memory_time:
      return check_rows_read_back(e.memory_operations, report, nsight::kSummaryRowCap, summary);
    case Written::Kind::nvtx_summary:
      return check_rows_read_back(e.nvtx_summary, report, nsight::kSummaryRowCap, summary);
    case Written::Kind::gpu_trace:
      return check_rows_read_back(e.gpu_timeline, report, nsight::kTimelineRowCap, timeline);
    case Written::Kind::nvtx_pushpop:
      return check_rows_read_back(e.nvtx_host_ranges, report, nsight::kTimelineRowCap, timeline);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz::Split in = fuzz::split_control(data, size);
  const std::filesystem::path dir = fuzz::scratch_dir() / "nsight";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directory(dir);
  const char* name = kNames[in.control % kNames.size()];
  fuzz::write_scratch(std::string("nsight/") + name, in.rest);

  const nsight::NsightEvidence evidence = nsight::load_optional(dir, {"forward", "step"});
  check_caps(evidence);
  for (const std::string& d : evidence.diagnostics)
    if (d.find(name) == std::string::npos)
      fuzz::fail("a diagnostic that does not name the file", d);

  for (auto order :
       {candle_graph::output::KeyOrder::declaration, candle_graph::output::KeyOrder::sorted}) {
    candle_graph::output::JsonStream w;
    nsight::write_nsight_json(w, evidence, order);
    const std::string text = w.take();
    if (!nlohmann::json::accept(text)) fuzz::fail("the gpu member is not valid JSON", text);
  }
  check_generated(fuzz::generated_nsight(data, size));
  return 0;
}
