// load_optional / load behaviour: the trace6.md §14 Nsight checklist, caps, hints, status.txt, raw
// report, multi-report stdout captures and the JSON shape of the `gpu` member.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include "nsight_test_helpers.hpp"

#include "output/json_stream.hpp"

namespace {

using namespace cg_nsight_test;
using candle_graph::import::nsight::GpuEvidenceStatus;
using candle_graph::import::nsight::NsightEvidence;
// The writer's JSON read back by an independent parser (nlohmann), keys in written order.
nlohmann::ordered_json to_json(const candle_graph::import::nsight::NsightEvidence& e) {
  candle_graph::output::JsonStream w;
  candle_graph::import::nsight::write_nsight_json(w, e,
                                                  candle_graph::output::KeyOrder::declaration);
  return nlohmann::ordered_json::parse(w.take());
}
using ::testing::HasSubstr;

const char* kKernHeader = "Time (%),Total Time (ns),Instances,Avg (ns),Min (ns),Max (ns),Name\n";

TEST(NsightLoad, NoDirectoryMeansNotRequested) {
  const NsightEvidence e = candle_graph::import::nsight::load_optional(std::nullopt, {"a"});
  EXPECT_EQ(e.status, GpuEvidenceStatus::unavailable);
  EXPECT_EQ(e.reason, "Nsight capture was not requested");
  EXPECT_EQ(e.correlation.mode, "none");
  EXPECT_EQ(e.correlation.reason, "No projected NVTX ranges were normalized");
}

// trace6.md §14: official kernel-summary headers → available, first kernel gemm, total 1200.
TEST(NsightChecklist, KernelSummaryOfficialHeaders) {
  TempDir dir;
  dir.write("run_cuda_gpu_kern_sum.csv",
            std::string(kKernHeader) + "50.0,1200,3,400,200,600,gemm\n");
  const NsightEvidence e = load_dir(dir.path());
  EXPECT_EQ(e.status, GpuEvidenceStatus::available);
  EXPECT_FALSE(e.reason.has_value());
  ASSERT_EQ(e.kernels.size(), 1u);
  EXPECT_EQ(e.kernels[0].name, "gemm");
  EXPECT_EQ(e.kernels[0].total_ns, 1200u);
  EXPECT_EQ(e.kernels[0].count, 3u);
  EXPECT_TRUE(e.coverage.kernel_summary);
}

// trace6.md §14: an API summary without the required columns → unavailable with diagnostics.
TEST(NsightChecklist, ApiSummaryMissingColumns) {
  const NsightEvidence e = load_dir(own_fixture("api_missing_columns"));
  EXPECT_EQ(e.status, GpuEvidenceStatus::unavailable);
  ASSERT_EQ(e.diagnostics.size(), 1u);
  EXPECT_THAT(e.diagnostics[0],
              HasSubstr("run_cuda_api_sum.csv:1: missing total-time nanoseconds column"));
}

// trace6.md §14: 101 kernel rows → {total_rows 101, displayed_rows 100, truncated true}.
TEST(NsightChecklist, HundredAndOneKernelRows) {
  std::string csv = kKernHeader;
  for (int i = 1; i <= 101; ++i)
    csv += "1.0," + std::to_string(i) + ",1,1,1,1,k" + std::to_string(i) + "\n";
  TempDir dir;
  dir.write("x_cuda_gpu_kern_sum.csv", csv);
  const NsightEvidence e = load_dir(dir.path());
  const auto& limit = e.limits.at("x_cuda_gpu_kern_sum.csv");
  EXPECT_EQ(limit.total_rows, 101u);
  EXPECT_EQ(limit.displayed_rows, 100u);
  EXPECT_TRUE(limit.truncated);
  ASSERT_EQ(e.kernels.size(), 100u);
  EXPECT_EQ(e.kernels.front().name, "k101");  // largest total first
  EXPECT_EQ(e.kernels.back().name, "k2");     // k1 (smallest) was cut
}

// trace6.md §14: exactly matching projected NVTX rows → complete, 1/1 matched.
TEST(NsightChecklist, ProjectedNvtxCompleteCorrelation) {
  TempDir dir;
  dir.write("run_nvtx_gpu_proj_trace.csv",
            "Name,Start (ns),Duration (ns),Projected Start (ns),Projected Duration (ns),Num GPU "
            "Ops\nrun/forward,1,10,2,8,3\n");
  const NsightEvidence e = load_dir(dir.path(), {"run/forward"});
  EXPECT_EQ(e.status, GpuEvidenceStatus::available);
  EXPECT_TRUE(e.correlation.complete);
  EXPECT_EQ(e.correlation.mode, "nvtx_projected_range");
  EXPECT_EQ(e.correlation.matched_ranges, 1u);
  EXPECT_EQ(e.correlation.total_ranges, 1u);
  EXPECT_EQ(e.correlation.reason,
            "Every projected NVTX range matched an exact application semantic label; Candle and "
            "Nsight clocks remain separate");
  ASSERT_EQ(e.nvtx_ranges.size(), 1u);
  EXPECT_EQ(e.nvtx_ranges[0].semantic_key, "run/forward");
  EXPECT_EQ(e.nvtx_ranges[0].projected_duration_ns, 8u);
  EXPECT_EQ(e.nvtx_ranges[0].gpu_operations, 3u);
}

// trace6.md §14: a projection CSV without timing columns → unavailable plus a diagnostic.
TEST(NsightChecklist, ProjectionWithoutTimingColumns) {
  const NsightEvidence e = load_dir(own_fixture("projection_without_timing"));
  EXPECT_EQ(e.status, GpuEvidenceStatus::unavailable);
  ASSERT_EQ(e.diagnostics.size(), 1u);
  EXPECT_THAT(e.diagnostics[0], HasSubstr("missing start/duration nanoseconds columns"));
}

TEST(NsightLoad, DomainPrefixedRangesMatchAndMissingOpsMakeIncomplete) {
  TempDir dir;
  dir.write("p_nvtx_gpu_proj_trace.csv",
            "Name,Projected Start (ns),Projected Duration (ns),Orig Start (ns),Orig Duration "
            "(ns),NumGPUOps\n:step/forward,5,10,1,20,2\nlib:step/backward,40,10,30,25,None\n");
  const NsightEvidence e = load_dir(dir.path(), {"step/forward", "step/backward"});
  EXPECT_EQ(e.correlation.matched_ranges, 2u);
  EXPECT_EQ(e.correlation.total_ranges, 2u);
  EXPECT_FALSE(e.correlation.complete);               // the second range has no GPU operation count
  EXPECT_EQ(e.nvtx_ranges[0].name, ":step/forward");  // raw name kept
  EXPECT_EQ(e.nvtx_ranges[0].semantic_key, "step/forward");
}

TEST(NsightLoad, StatusTxtReasonAndRawReport) {
  TempDir dir;
  dir.write("status.txt", "status=unavailable\nreason=nsys not installed\n");
  dir.write("profile.nsys-rep", "binary");
  const NsightEvidence e = load_dir(dir.path());
  EXPECT_EQ(e.status, GpuEvidenceStatus::unavailable);
  EXPECT_EQ(e.reason, "nsys not installed");
  EXPECT_EQ(e.raw_report, (dir.path() / "profile.nsys-rep").string());
  EXPECT_TRUE(e.diagnostics.empty());  // status.txt is not mistaken for a report
}

TEST(NsightLoad, HeaderSignatureBeatsFileName) {
  // A kernel summary under an unhelpful name, and an API summary misnamed as a kernel summary.
  TempDir dir;
  dir.write("stats_kernels.csv", std::string(kKernHeader) + "50.0,1200,3,400,200,600,gemm\n");
  dir.write("wrong_cuda_gpu_kern_sum.csv",
            "Time (%),Total Time (ns),Num Calls,Avg (ns),Min (ns),Max (ns),Name\n1,50,2,25,20,30,"
            "cudaFree\n");
  const NsightEvidence e = load_dir(dir.path());
  ASSERT_EQ(e.kernels.size(), 1u);
  EXPECT_EQ(e.kernels[0].name, "gemm");
  ASSERT_EQ(e.runtime_calls.size(), 1u);
  EXPECT_EQ(e.runtime_calls[0].name, "cudaFree");
}

TEST(NsightLoad, HintFallbackWhenSignatureIncomplete) {
  // No count column, so no signature; the file name says kernel summary (as 0.7.0 would read it).
  TempDir dir;
  dir.write("a_cuda_gpu_kern_sum.csv", "Name,Total Time (ns)\ngemm,77\n");
  const NsightEvidence e = load_dir(dir.path());
  ASSERT_EQ(e.kernels.size(), 1u);
  EXPECT_EQ(e.kernels[0].total_ns, 77u);
  EXPECT_EQ(e.kernels[0].count, 0u);
}

TEST(NsightLoad, OldGpuTraceSecondsAndPlainBytes) {
  TempDir dir;
  dir.write(
      "report1_gputrace.csv",
      "Start(sec),Duration(nsec),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem,DymSMem,"
      "Bytes,Thru(MB/s),SrcMemKd,DstMemKd,Device,Ctx,Strm,Name\n"
      "1.500001,2048,9,,,,,,,,,,4096,2000.0,Pageable,Device,Tesla V100 (0),1,7,[CUDA memcpy "
      "HtoD]\n");
  const NsightEvidence e = load_dir(dir.path());
  ASSERT_EQ(e.gpu_timeline.size(), 1u);
  EXPECT_EQ(e.gpu_timeline[0].start_ns, 1500001000u);
  EXPECT_EQ(e.gpu_timeline[0].duration_ns, 2048u);
  EXPECT_EQ(e.gpu_timeline[0].bytes, 4096u);
  EXPECT_EQ(e.gpu_timeline[0].stream, 7u);
  EXPECT_EQ(e.gpu_timeline[0].category, "memcpy");
}

TEST(NsightLoad, MultiReportStdoutCapture) {
  // stdout_multi/stats.txt: kernel summary (2 rows, line 3 header), blank line, memory-time
  // summary with `"1,500"` (1500 ns), then a SKIPPED osrt_sum.
  const NsightEvidence e = load_dir(own_fixture("stdout_multi"));
  EXPECT_TRUE(e.diagnostics.empty());
  ASSERT_EQ(e.kernels.size(), 2u);
  EXPECT_EQ(e.kernels[0].name, R"(void gemm<float, 128>("tile", int))");
  EXPECT_EQ(e.kernels[0].category, "gemm");
  EXPECT_EQ(e.kernels[1].category, "normalization");
  ASSERT_EQ(e.memory_operations.size(), 1u);
  EXPECT_EQ(e.memory_operations[0].total_ns, 1500u);
  EXPECT_EQ(e.limits.count("stats.txt"), 1u);
  EXPECT_EQ(e.limits.count("stats.txt [cuda_gpu_mem_time_sum]"), 1u);
  EXPECT_EQ(e.source_csv.size(), 1u);
}

TEST(NsightLoad, BackToBackStdoutReportsWithoutBlankLine) {
  // Two reports printed to stdout with no blank line between them: the second `Processing`
  // line ends the first report instead of being read as a short row.
  TempDir dir;
  dir.write("capture.out",
            "Processing [a.sqlite] with [cuda_api_sum.py]...\n"
            "Time (%),Total Time (ns),Num Calls,Avg (ns),Min (ns),Max (ns),Name\n"
            "100.0,40,2,20,10,30,cudaFree\n"
            "Processing [a.sqlite] with [nvtx_pushpop_trace.py]...\n"
            "Start (ns),End (ns),Name,Lvl,RangeId\n"
            "100,350,:forward,0,1\n");
  const NsightEvidence e = load_dir(dir.path(), {"forward"});
  EXPECT_TRUE(e.diagnostics.empty()) << (e.diagnostics.empty() ? "" : e.diagnostics[0]);
  ASSERT_EQ(e.runtime_calls.size(), 1u);
  EXPECT_EQ(e.runtime_calls[0].total_ns, 40u);
  // No Duration column: the push/pop range lasts End − Start = 250 ns.
  ASSERT_EQ(e.nvtx_host_ranges.size(), 1u);
  EXPECT_EQ(e.nvtx_host_ranges[0].duration_ns, 250u);
  EXPECT_EQ(e.nvtx_host_ranges[0].matched, true);
}

TEST(NsightLoad, LargeTimelineKeepsOnlyTheCap) {
  // 200 000 rows in reverse start order: the 500 earliest are kept, in start order.
  std::string csv = "Start (ns),Duration (ns),CorrId,GrdX,Device,Ctx,Strm,Name\n";
  for (int i = 200000; i >= 1; --i) csv += std::to_string(i) + ",5,1,1,GPU (1),1,7,k\n";
  TempDir dir;
  dir.write("big_cuda_gpu_trace.csv", csv);
  const NsightEvidence e = load_dir(dir.path());
  ASSERT_EQ(e.gpu_timeline.size(), 500u);
  EXPECT_EQ(e.gpu_timeline.front().start_ns, 1u);
  EXPECT_EQ(e.gpu_timeline.back().start_ns, 500u);
  EXPECT_EQ(e.gpu_timeline.front().device, 1u);
  EXPECT_EQ(e.limits.at("big_cuda_gpu_trace.csv").total_rows, 200000u);
}

TEST(NsightJson, UnavailableShapeMatchesOriginal) {
  const auto j =
      to_json(candle_graph::import::nsight::unavailable("Nsight capture was not requested"));
  std::vector<std::string> keys;
  for (const auto& [key, _] : j.items()) keys.push_back(key);
  EXPECT_THAT(keys,
              ::testing::ElementsAre("status", "reason", "source_csv", "coverage", "correlation",
                                     "diagnostics", "limits", "kernels", "runtime_calls",
                                     "memory_operations", "nvtx_ranges", "gpu_timeline"));
  EXPECT_EQ(j["status"], "unavailable");
  EXPECT_EQ(j["coverage"].size(), 5u);  // added coverage flags only appear when true
  EXPECT_EQ(j["correlation"].dump(),
            R"({"mode":"none","clock_aligned":false,"complete":false,"matched_ranges":0,)"
            R"("total_ranges":0,"reason":"No projected NVTX ranges were normalized"})");
}

TEST(NsightJson, RowsSerializeInDeclarationOrder) {
  TempDir dir;
  dir.copy_shared("cuda_gpu_trace-apexedgesystems-vernier.csv");
  const auto j = to_json(load_dir(dir.path()));
  EXPECT_EQ(j["status"], "available");
  EXPECT_FALSE(j.contains("reason"));
  EXPECT_EQ(j["gpu_timeline"][0].dump(),
            R"({"name":"[CUDA memcpy Host-to-Device]","kind":"gpu_operation","device":0,)"
            R"("context":1,"stream":13,"correlation_id":123,"start_ns":1134711990,)"
            R"("duration_ns":661398,"category":"memcpy","bytes":4194000})");
  EXPECT_EQ(j["limits"]["cuda_gpu_trace-apexedgesystems-vernier.csv"].dump(),
            R"({"total_rows":16,"displayed_rows":16,"truncated":false})");
}

}  // namespace
