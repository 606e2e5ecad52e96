// libFuzzer target for the Nsight Systems `nsys stats` reader: one file, under one of the names
// that select a report layout (or none, or a stdout capture), in an otherwise empty Nsight
// directory. Loading never throws (a bad file becomes a diagnostic); the rows kept stay within
// their caps; and the `gpu` member written from it is valid JSON.
//
// Input: one control byte choosing the file name, then the file.
#include <nlohmann/json.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>

#include "fuzz_support.hpp"
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
  return 0;
}
