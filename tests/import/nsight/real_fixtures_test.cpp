// Every real `nsys stats` output in shared/fixtures/nsys parses; values asserted here were read
// by hand from the files (the comment on each says where), never produced by this code.
#include <gtest/gtest.h>

#include <algorithm>

#include "nsight_test_helpers.hpp"

namespace {

using namespace cg_nsight_test;
using candle_graph::import::nsight::GpuEvidenceStatus;
using candle_graph::import::nsight::NsightEvidence;

TEST(NsightRealFixtures, EveryFixtureFileParsesWithoutDiagnostics) {
  int files = 0;
  for (const auto& entry : fs::directory_iterator(shared_nsys_dir())) {
    const std::string name = entry.path().filename().string();
    if (name == "SOURCES.md" || name.starts_with("stats-stdout")) continue;
    ++files;
    const NsightEvidence e = load_shared(name);
    EXPECT_EQ(e.status, GpuEvidenceStatus::available) << name << ": " << e.reason.value_or("");
    EXPECT_TRUE(e.diagnostics.empty())
        << name << ": " << (e.diagnostics.empty() ? "" : e.diagnostics[0]);
    EXPECT_EQ(e.source_csv.size(), 1u) << name;
    ASSERT_EQ(e.limits.count(name), 1u) << name;
    EXPECT_GT(e.limits.at(name).total_rows, 0u) << name;
  }
  EXPECT_EQ(files, 19);  // 21 entries in the folder minus SOURCES.md and the CSV-less log
}

TEST(NsightRealFixtures, StdoutLogWithoutCsvIsIgnoredQuietly) {
  // stats-stdout-*.log only lists `Processing [...] ... PROCESSED` lines: no report inside.
  const NsightEvidence e = load_shared("stats-stdout-zihuanxu-db-tpch-q5.log");
  EXPECT_EQ(e.status, GpuEvidenceStatus::unavailable);
  EXPECT_EQ(e.reason, "No supported nsys stats CSV reports were found");
  EXPECT_TRUE(e.diagnostics.empty());
}

TEST(NsightRealFixtures, KernelSummary2024TopKernelAndCap) {
  // 176 lines = header + 175 rows (wc -l); row 2 is the largest Total Time (ns): 17081723060,
  // 2800 instances, Avg 6100615.4 → truncated to 6100615, Min 1538875, Max 11242549.
  const NsightEvidence e = load_shared("cuda_gpu_kern_sum-mingxu1067-GPU-Perf-Analyzer.csv");
  ASSERT_TRUE(e.coverage.kernel_summary);
  ASSERT_EQ(e.kernels.size(), 100u);
  const auto& top = e.kernels.front();
  EXPECT_EQ(top.name,
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64_warpgroupsize1x1x1_"
            "execute_segment_k_off_kernel__5x_cublas");
  EXPECT_EQ(top.total_ns, 17081723060u);
  EXPECT_EQ(top.count, 2800u);
  EXPECT_EQ(top.average_ns, 6100615u);
  EXPECT_EQ(top.minimum_ns, 1538875u);
  EXPECT_EQ(top.maximum_ns, 11242549u);
  EXPECT_EQ(top.category, "gemm");
  // Row 3 is the quoted NCCL kernel with commas in its parameter list.
  EXPECT_EQ(e.kernels[1].name,
            "ncclDevKernel_AllGather_RING_LL(ncclDevComm *, unsigned long, ncclWork *)");
  EXPECT_EQ(e.kernels[1].total_ns, 11718850432u);
  EXPECT_EQ(e.kernels[1].category, "communication");
  const auto& limit = e.limits.at("cuda_gpu_kern_sum-mingxu1067-GPU-Perf-Analyzer.csv");
  EXPECT_EQ(limit.total_rows, 175u);
  EXPECT_EQ(limit.displayed_rows, 100u);
  EXPECT_TRUE(limit.truncated);
  EXPECT_TRUE(std::is_sorted(e.kernels.begin(), e.kernels.end(),
                             [](const auto& a, const auto& b) { return a.total_ns > b.total_ns; }));
}

TEST(NsightRealFixtures, KernelSummary2021OldHeader) {
  // gpukernsum (2021): `Time(%),Total Time (ns),Instances,Average,Minimum,Maximum,StdDev,Name`,
  // 86 lines = 85 rows; first row ampere_..._tn 128852704 ns, 1440, 89481.0, 47744, 178272.
  const NsightEvidence e = load_shared("gpukernsum-mingxu1067-GPU-Perf-Analyzer.csv");
  ASSERT_EQ(e.kernels.size(), 85u);
  EXPECT_EQ(e.kernels[0].name, "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_tn");
  EXPECT_EQ(e.kernels[0].total_ns, 128852704u);
  EXPECT_EQ(e.kernels[0].count, 1440u);
  EXPECT_EQ(e.kernels[0].average_ns, 89481u);
  EXPECT_EQ(e.kernels[0].minimum_ns, 47744u);
  EXPECT_EQ(e.kernels[0].maximum_ns, 178272u);
  // Row 5: a quoted template name containing commas.
  EXPECT_EQ(e.kernels[3].name,
            "void paddle::operators::VecCastCUDAKernel<float, paddle::platform::float16, "
            "4>(float const*, long, paddle::platform::float16*)");
}

TEST(NsightRealFixtures, KernelSummaryLongCutlassTemplateName) {
  // Row 2 of the MOEresearch-b file is one ~2.3 kB quoted CUTLASS name, 14198407375 ns total.
  const NsightEvidence e = load_shared("cuda_gpu_kern_sum-gujialiang123-MOEresearch-b.csv");
  ASSERT_EQ(e.kernels.size(), 88u);  // 89 lines
  EXPECT_TRUE(e.kernels[0].name.starts_with("void cutlass::device_kernel<cutlass::gemm::kernel::"));
  EXPECT_TRUE(e.kernels[0].name.ends_with(">(T1::Params)"));
  EXPECT_EQ(e.kernels[0].total_ns, 14198407375u);
  EXPECT_EQ(e.kernels[0].count, 97620u);
  EXPECT_EQ(e.kernels[0].category, "gemm");
}

TEST(NsightRealFixtures, SingleKernelWithCommasInQuotes) {
  const NsightEvidence e = load_shared("cuda_gpu_kern_sum-zihuanxu-db-tpch-q5.csv");
  ASSERT_EQ(e.kernels.size(), 1u);
  EXPECT_EQ(e.kernels[0].name,
            "memq5::<unnamed>::arrow_q5_kernel(const int *, const int *, const long *, const int "
            "*, long, const int *, int, const int *, int, unsigned long long *, int, unsigned long "
            "long *, int *)");
  EXPECT_EQ(e.kernels[0].total_ns, 15343115u);
}

TEST(NsightRealFixtures, MemoryTimeSummaryShortAndLongMemcpyNames) {
  // 2023 file: `[CUDA memcpy DtoD]` 210555007 ns / 815, `[CUDA memset]` 3448815 ns / 2650.
  NsightEvidence e = load_shared("cuda_gpu_mem_time_sum-mingxu1067-GPU-Perf-Analyzer-b.csv");
  ASSERT_TRUE(e.coverage.memory_summary);
  ASSERT_EQ(e.memory_operations.size(), 4u);
  EXPECT_EQ(e.memory_operations[0].name, "[CUDA memcpy DtoD]");
  EXPECT_EQ(e.memory_operations[0].total_ns, 210555007u);
  EXPECT_EQ(e.memory_operations[0].count, 815u);
  EXPECT_EQ(e.memory_operations[0].category, "memcpy");
  EXPECT_EQ(e.memory_operations[1].name, "[CUDA memset]");
  EXPECT_EQ(e.memory_operations[1].total_ns, 3448815u);
  EXPECT_EQ(e.memory_operations[1].category, "memset");
  // 2024 file: `[CUDA memcpy Device-to-Device]` 153279737 ns.
  e = load_shared("cuda_gpu_mem_time_sum-mingxu1067-GPU-Perf-Analyzer.csv");
  ASSERT_EQ(e.memory_operations.size(), 3u);
  EXPECT_EQ(e.memory_operations[0].name, "[CUDA memcpy Device-to-Device]");
  EXPECT_EQ(e.memory_operations[0].total_ns, 153279737u);
  EXPECT_EQ(e.memory_operations[0].category, "memcpy");
}

TEST(NsightRealFixtures, MemorySizeSummaryInBytes) {
  // `Total (MB)` 73185.422 for Device-to-Host; nsys MB = 10^6 B → 73185422000 bytes.
  const NsightEvidence e = load_shared("cuda_gpu_mem_size_sum-b-SFINCS.csv");
  ASSERT_TRUE(e.coverage.memory_size_summary);
  ASSERT_EQ(e.memory_sizes.size(), 4u);
  EXPECT_EQ(e.memory_sizes[0].name, "[CUDA memcpy Device-to-Host]");
  EXPECT_EQ(e.memory_sizes[0].total_bytes, 73185422000u);
  EXPECT_EQ(e.memory_sizes[0].count, 313135u);
  EXPECT_EQ(e.memory_sizes[0].average_bytes, 234000u);  // Avg (MB) 0.234
  EXPECT_EQ(e.memory_sizes[0].maximum_bytes, 421000u);  // Max (MB) 0.421
  EXPECT_EQ(e.memory_sizes[3].name, "[CUDA memcpy Peer-to-Peer]");
  EXPECT_EQ(e.memory_sizes[3].total_bytes, 104832000u);  // 104.832 MB
}

TEST(NsightRealFixtures, ApiSummaryFromStdoutCaptures) {
  // 2025.3.2 stdout: `Processing [...]` line, header, 8 rows; first cudaMemcpy 199253613 / 183.
  NsightEvidence e = load_shared("cuda_api_sum-apexedgesystems-vernier-stdout.txt");
  ASSERT_TRUE(e.coverage.runtime_summary);
  ASSERT_EQ(e.runtime_calls.size(), 8u);
  EXPECT_EQ(e.runtime_calls[0].name, "cudaMemcpy");
  EXPECT_EQ(e.runtime_calls[0].total_ns, 199253613u);
  EXPECT_EQ(e.runtime_calls[0].count, 183u);
  EXPECT_FALSE(e.runtime_calls[0].category.has_value());
  // 2024.5.1 stdout: blank line, 3 NOTICE lines, blank, `Processing`, header, 13 rows (20 lines).
  e = load_shared("cuda_api_sum-gujialiang123-MOEresearch-stdout.txt");
  ASSERT_EQ(e.runtime_calls.size(), 13u);
  EXPECT_EQ(e.runtime_calls[0].name, "cudaMemcpyAsync");
  EXPECT_EQ(e.runtime_calls[0].total_ns, 10414705400u);
  EXPECT_EQ(e.runtime_calls[0].count, 20599u);
}

TEST(NsightRealFixtures, GpuTrace2026WithGreenCtx) {
  // Row 2: Start 1134711990, Duration 661398, CorrId 123, Bytes (MB) 4.194, Device `… (0)`,
  // Ctx 1, GreenCtx empty, Strm 13, [CUDA memcpy Host-to-Device]. 17 lines = 16 rows.
  const NsightEvidence e = load_shared("cuda_gpu_trace-apexedgesystems-vernier.csv");
  ASSERT_TRUE(e.coverage.gpu_timeline);
  ASSERT_EQ(e.gpu_timeline.size(), 16u);
  const auto& first = e.gpu_timeline[0];
  EXPECT_EQ(first.name, "[CUDA memcpy Host-to-Device]");
  EXPECT_EQ(first.kind, "gpu_operation");
  EXPECT_EQ(first.start_ns, 1134711990u);
  EXPECT_EQ(first.duration_ns, 661398u);
  EXPECT_EQ(first.correlation_id, 123u);
  EXPECT_EQ(first.device, 0u);
  EXPECT_EQ(first.context, 1u);
  EXPECT_EQ(first.stream, 13u);
  EXPECT_EQ(first.bytes, 4194000u);
  EXPECT_EQ(first.category, "memcpy");
  // Row 4: the saxpy kernel (CorrId 128, 7072 ns), no bytes.
  EXPECT_EQ(e.gpu_timeline[2].correlation_id, 128u);
  EXPECT_EQ(e.gpu_timeline[2].duration_ns, 7072u);
  EXPECT_FALSE(e.gpu_timeline[2].bytes.has_value());
  EXPECT_EQ(e.gpu_timeline[2].name,
            "vernier::bench::demo::<unnamed>::saxpyKernel(float, const float *, float *, unsigned "
            "long)");
}

TEST(NsightRealFixtures, NvtxProjectedTraceRealLayout) {
  // Header `Name,Projected Start (ns),Projected Duration (ns),Orig Start (ns),Orig Duration (ns),
  // …,NumGPUOps,…`; 600 lines = header + 599 rows, of which the first is the `None` root → 598.
  // Row 3 `Train_step`: projected 7483079 / 430904491, orig 6375107 / 333984658, 4581 ops.
  const NsightEvidence e =
      load_shared("nvtx_gpu_proj_trace-mingxu1067-GPU-Perf-Analyzer-head600.csv", {"Train_step"});
  ASSERT_TRUE(e.coverage.nvtx_projection);
  const auto& limit = e.limits.at("nvtx_gpu_proj_trace-mingxu1067-GPU-Perf-Analyzer-head600.csv");
  EXPECT_EQ(limit.total_rows, 598u);
  EXPECT_EQ(limit.displayed_rows, 500u);
  EXPECT_TRUE(limit.truncated);
  ASSERT_EQ(e.nvtx_ranges.size(), 500u);
  const auto step = std::find_if(e.nvtx_ranges.begin(), e.nvtx_ranges.end(),
                                 [](const auto& r) { return r.name == "Train_step"; });
  ASSERT_NE(step, e.nvtx_ranges.end());
  EXPECT_EQ(step->kind, "nvtx_range");
  EXPECT_EQ(step->start_ns, 6375107u);
  EXPECT_EQ(step->duration_ns, 333984658u);
  EXPECT_EQ(step->projected_start_ns, 7483079u);
  EXPECT_EQ(step->projected_duration_ns, 430904491u);
  EXPECT_EQ(step->gpu_operations, 4581u);
  EXPECT_EQ(step->matched, true);
  // Row 4: quoted name with a comma; `TSL:` is the NVTX domain and is stripped for matching.
  const auto xla = std::find_if(e.nvtx_ranges.begin(), e.nvtx_ranges.end(),
                                [](const auto& r) { return r.name.starts_with("TSL:XlaModule"); });
  ASSERT_NE(xla, e.nvtx_ranges.end());
  EXPECT_EQ(xla->name, "TSL:XlaModule:#hlo_module=pjit__wrapped_step_fn,program_id=498#");
  EXPECT_EQ(xla->semantic_key, "XlaModule:#hlo_module=pjit__wrapped_step_fn,program_id=498#");
  // One of 598 ranges matched the single expected key (the count covers all rows, not just 500).
  EXPECT_EQ(e.correlation.mode, "nvtx_projected_range");
  EXPECT_EQ(e.correlation.matched_ranges, 1u);
  EXPECT_EQ(e.correlation.total_ranges, 598u);
  EXPECT_FALSE(e.correlation.complete);
  EXPECT_FALSE(e.correlation.clock_aligned);
  EXPECT_EQ(e.correlation.reason,
            "1/598 projected NVTX ranges matched exact application semantic labels; clocks remain "
            "separate");
}

TEST(NsightRealFixtures, NvtxPushPopTraceAndSummaries) {
  // pushpop trace row 3 `:copy_in`: Start 1496163242, Duration 2547834.
  NsightEvidence e = load_shared("nvtx_pushpop_trace-apexedgesystems-vernier.csv", {"copy_in"});
  ASSERT_TRUE(e.coverage.nvtx_host_ranges);
  ASSERT_EQ(e.nvtx_host_ranges.size(), 8u);
  EXPECT_EQ(e.nvtx_host_ranges[1].name, ":copy_in");
  EXPECT_EQ(e.nvtx_host_ranges[1].semantic_key, "copy_in");
  EXPECT_EQ(e.nvtx_host_ranges[1].matched, true);
  EXPECT_EQ(e.nvtx_host_ranges[1].start_ns, 1496163242u);
  EXPECT_EQ(e.nvtx_host_ranges[1].duration_ns, 2547834u);
  EXPECT_EQ(e.correlation.mode, "none");  // host ranges do not count as projected ranges
  // nvtx_sum (with Style): `:measured_request` 15887713 ns.
  e = load_shared("nvtx_sum-zihuanxu-db-tpch-q5.csv");
  ASSERT_EQ(e.nvtx_summary.size(), 5u);
  EXPECT_EQ(e.nvtx_summary[0].name, ":measured_request");
  EXPECT_EQ(e.nvtx_summary[0].total_ns, 15887713u);
  // nvtx_pushpop_sum (no Style): 17 lines = 16 rows; `:mom_fluxes_copyout` 7657239073 / 14227.
  e = load_shared("nvtx_pushpop_sum-b-SFINCS.csv");
  ASSERT_EQ(e.nvtx_summary.size(), 16u);
  EXPECT_EQ(e.nvtx_summary[0].name, ":mom_fluxes_copyout");
  EXPECT_EQ(e.nvtx_summary[0].total_ns, 7657239073u);
  EXPECT_EQ(e.nvtx_summary[0].count, 14227u);
}

TEST(NsightRealFixtures, WholeFolderAtOnce) {
  // The folder as a user would pass it: 19 reports, sorted by path, no diagnostics, and the
  // first kernel row comes from the first kernel file by path (MOEresearch-b, 14198407375 ns).
  const NsightEvidence e = load_dir(shared_nsys_dir());
  EXPECT_EQ(e.status, GpuEvidenceStatus::available);
  EXPECT_FALSE(e.reason.has_value());
  EXPECT_TRUE(e.diagnostics.empty());
  EXPECT_EQ(e.source_csv.size(), 19u);
  EXPECT_TRUE(std::is_sorted(e.source_csv.begin(), e.source_csv.end()));
  ASSERT_FALSE(e.kernels.empty());
  EXPECT_EQ(e.kernels[0].total_ns, 14198407375u);
  EXPECT_FALSE(e.raw_report.has_value());
}

}  // namespace
