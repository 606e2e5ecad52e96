// Header signature → report kind, per report and nsys version (nsight.md §6.2), and the
// file-name hint that is used only when no signature matches.
#include <gtest/gtest.h>

#include "import/nsight/csv_reader.hpp"
#include "import/nsight/report_header.hpp"

namespace {

using candle_graph::import::nsight::detect_report;
using candle_graph::import::nsight::map_columns;
using candle_graph::import::nsight::report_hint_from_name;
using candle_graph::import::nsight::ReportKind;
using candle_graph::import::nsight::split_csv_line;

struct SignatureCase {
  const char* version;
  const char* header;
  std::optional<ReportKind> kind;
};

// Headers copied from nsight.md §6.2 (and the 0.7.0 unit tests, §10.4).
const SignatureCase kCases[] = {
    {"kern_sum 2023-2026",
     "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name",
     ReportKind::kernel_summary},
    {"gpukernsum 2021", "Time(%),Total Time (ns),Instances,Average,Minimum,Maximum,StdDev,Name",
     ReportKind::kernel_summary},
    {"gpukernsum 2020", "Time(%),Total Time (ns),Instances,Average,Minimum,Maximum,Name",
     ReportKind::kernel_summary},
    {"0.7.0 unit test", "Time (%),Total Time (ns),Instances,Avg (ns),Min (ns),Max (ns),Name",
     ReportKind::kernel_summary},
    {"api_sum 2022-2026",
     "Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name",
     ReportKind::api_summary},
    {"cudaapisum 2021", "Time(%),Total Time (ns),Num Calls,Average,Minimum,Maximum,StdDev,Name",
     ReportKind::api_summary},
    {"mem_time_sum 2023-2026",
     "Time (%),Total Time (ns),Count,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Operation",
     ReportKind::memory_time_summary},
    {"gpumemtimesum 2021",
     "Time(%),Total Time (ns),Operations,Average,Minimum,Maximum,StdDev,Operation",
     ReportKind::memory_time_summary},
    {"mem_size_sum", "Total (MB),Count,Avg (MB),Med (MB),Min (MB),Max (MB),StdDev (MB),Operation",
     ReportKind::memory_size_summary},
    {"gpu_trace 2025-2026",
     "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem "
     "(MB),Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name",
     ReportKind::gpu_trace},
    {"gpu_trace 2023-2024",
     "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem "
     "(MB),Bytes (MB),Throughput (MBps),SrcMemKd,DstMemKd,Device,Ctx,Strm,Name",
     ReportKind::gpu_trace},
    {"gpu_trace transitional",
     "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem "
     "(MB),Bytes (MB),Throughput (MBps),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name",
     ReportKind::gpu_trace},
    {"gputrace 2021",
     "Start(sec),Duration(nsec),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem,DymSMem,Bytes,"
     "Thru(MB/s),SrcMemKd,DstMemKd,Device,Ctx,Strm,Name",
     ReportKind::gpu_trace},
    {"nvtx_gpu_proj_trace 2023-2026",
     "Name,Projected Start (ns),Projected Duration (ns),Orig Start (ns),Orig Duration "
     "(ns),Style,PID,TID,NumGPUOps,Lvl,NumChild,RangeId,ParentId,RangeStack",
     ReportKind::nvtx_projected_trace},
    {"0.7.0 unit test projection",
     "Name,Start (ns),Duration (ns),Projected Start (ns),Projected Duration (ns),Num GPU Ops",
     ReportKind::nvtx_projected_trace},
    {"nvtx_pushpop_trace 2025-2026",
     "Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild "
     "(ns),Name,PID,TID,Lvl,NumChild,RangeId,ParentId,RangeStack,NameTree",
     ReportKind::nvtx_pushpop_trace},
    {"nvtx_sum 2024",
     "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev "
     "(ns),Style,Range",
     ReportKind::nvtx_summary},
    {"nvtx_pushpop_sum",
     "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Range",
     ReportKind::nvtx_summary},
    {"nvtxsum 2021", "Time(%),Total Time (ns),Instances,Average,Minimum,Maximum,StdDev,Range",
     ReportKind::nvtx_summary},
    // Not supported: the API trace shares Start/Duration/CorrID but has no grid/context/stream.
    {"cuda_api_trace", "Start (ns),Duration (ns),Name,Result,CorrID,Pid,Tid,T-Pri,Thread Name",
     std::nullopt},
    {"preamble line",
     "Processing [x.sqlite] with [/opt/nvidia/nsight-systems/2024.5.1/reports/cuda_api_sum.py]...",
     std::nullopt},
    {"bare Total has no unit", "Total,Operations,Average,Minimum,Maximum,Operation", std::nullopt},
};

TEST(NsightHeaderSignature, EachReportAndVersion) {
  for (const auto& c : kCases) {
    const auto kind = detect_report(map_columns(split_csv_line(c.header)));
    EXPECT_EQ(kind, c.kind) << c.version;
  }
}

TEST(NsightHeaderSignature, OldAndNewColumnNamesMapToTheSameRoles) {
  using candle_graph::import::nsight::Role;
  const auto old_map =
      map_columns(split_csv_line("Start(sec),Duration(nsec),CorrId,GrdX,Device,Ctx,Strm,Name"));
  const auto new_map = map_columns(
      split_csv_line("Start (ns),Duration (ns),CorrId,GrdX,Device,Ctx,GreenCtx,Strm,Name"));
  for (const auto* m : {&old_map, &new_map}) {
    EXPECT_TRUE(m->has(Role::context));
    EXPECT_TRUE(m->has(Role::stream));
    EXPECT_TRUE(m->has(Role::correlation));
  }
  EXPECT_EQ(old_map.column(Role::start).unit, "sec");
  EXPECT_EQ(new_map.column(Role::start).unit, "ns");
  EXPECT_EQ(old_map.column(Role::stream).raw, "Strm");
  EXPECT_EQ(*new_map.at(Role::stream), 7u);  // GreenCtx is not the stream
  const auto proj = map_columns(split_csv_line(
      "Name,Projected Start (ns),Projected Duration (ns),Orig Start (ns),Orig Duration (ns)"));
  EXPECT_EQ(proj.column(Role::start).raw, "Orig Start (ns)");
  EXPECT_EQ(proj.column(Role::duration).raw, "Orig Duration (ns)");
}

TEST(NsightHeaderSignature, SpecNormalisedHeadersStillWork) {
  // trace6.md §10.4 aliases written literally (`total_ns`, `dur_ns`, `proj_start_ns`…).
  EXPECT_EQ(detect_report(map_columns(split_csv_line("name,total_time_ns,instances,avg_ns"))),
            ReportKind::kernel_summary);
  EXPECT_EQ(detect_report(map_columns(
                split_csv_line("range,start_ns,dur_ns,proj_start_ns,proj_dur_ns,num_gpu_ops"))),
            ReportKind::nvtx_projected_trace);
}

TEST(NsightHeaderSignature, FileNameHintsShortAndSnakeCase) {
  EXPECT_EQ(report_hint_from_name("run_cuda_gpu_kern_sum.csv"), ReportKind::kernel_summary);
  EXPECT_EQ(report_hint_from_name("report1_gpukernsum.csv"), ReportKind::kernel_summary);
  EXPECT_EQ(report_hint_from_name("x_cudaapisum.csv"), ReportKind::api_summary);
  EXPECT_EQ(report_hint_from_name("x_gpumemtimesum.csv"), ReportKind::memory_time_summary);
  EXPECT_EQ(report_hint_from_name("x_gpumemsizesum.csv"), ReportKind::memory_size_summary);
  EXPECT_EQ(report_hint_from_name("x_gputrace.csv"), ReportKind::gpu_trace);
  EXPECT_EQ(report_hint_from_name("nvtx_pushpop_sum_nvtx_pushpop_sum.csv"),
            ReportKind::nvtx_summary);
  EXPECT_EQ(report_hint_from_name("x_nvtxppsum.csv"), ReportKind::nvtx_summary);
  EXPECT_EQ(report_hint_from_name("stats_kernels.csv"), std::nullopt);
}

}  // namespace
