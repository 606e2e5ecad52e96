// Bad input never fails the caller: each malformed file gives a diagnostic naming the file and
// line, and the evidence status says why nothing was loaded (trace6.md §10.2–§10.4).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nsight_test_helpers.hpp"

namespace {

using namespace cg_nsight_test;
using candle_graph::import::nsight::GpuEvidenceStatus;
using candle_graph::import::nsight::NsightEvidence;
using ::testing::HasSubstr;

// Loads one hand-made case directory; the single file in it is malformed.
NsightEvidence load_case(const std::string& name) {
  return load_dir(own_fixture(name));
}

void expect_single_diagnostic(const NsightEvidence& e, const std::string& file_and_line,
                              const std::string& message) {
  EXPECT_EQ(e.status, GpuEvidenceStatus::unavailable);
  EXPECT_EQ(e.reason, "No supported nsys stats CSV reports were found");
  EXPECT_TRUE(e.source_csv.empty());
  EXPECT_TRUE(e.kernels.empty());
  EXPECT_TRUE(e.limits.empty());
  ASSERT_EQ(e.diagnostics.size(), 1u);
  EXPECT_THAT(e.diagnostics[0], HasSubstr(file_and_line));
  EXPECT_THAT(e.diagnostics[0], HasSubstr(message));
}

TEST(NsightMalformed, TruncatedRowNamesFileAndLine) {
  expect_single_diagnostic(load_case("truncated_row"), "run_cuda_gpu_kern_sum.csv:3: ",
                           "truncated row: 2 fields, header has 9");
}

TEST(NsightMalformed, TextInNumberColumn) {
  expect_single_diagnostic(load_case("text_in_number"), "run_cuda_gpu_kern_sum.csv:3: ",
                           "invalid number `lots` in column `Total Time (ns)`");
}

TEST(NsightMalformed, UnknownReport) {
  expect_single_diagnostic(load_case("unknown_report"), "run_cuda_api_trace.csv:1: ",
                           "unrecognized report: header `Start (ns),Duration (ns),Name");
}

TEST(NsightMalformed, UnterminatedQuote) {
  expect_single_diagnostic(load_case("unterminated_quote"),
                           "run_cuda_gpu_kern_sum.csv:2: ", "quoted field is never closed");
}

TEST(NsightMalformed, EmptyCsv) {
  TempDir dir;
  dir.write("empty_cuda_api_sum.csv", "");
  const NsightEvidence e = load_dir(dir.path());
  expect_single_diagnostic(e,
                           "empty_cuda_api_sum.csv: ", "no CSV header found for the cuda_api_sum");
  TempDir other;
  other.write("data.csv", "\n\n");
  expect_single_diagnostic(load_dir(other.path()), "data.csv: ", "empty file");
}

TEST(NsightMalformed, ZeroDurationAndInvalidProjection) {
  TempDir dir;
  dir.write("a_cuda_gpu_trace.csv",
            "Start (ns),Duration (ns),CorrId,GrdX,Device,Ctx,Strm,Name\n10,0,1,1,GPU (0),1,7,k\n");
  dir.write("b_nvtx_gpu_proj_trace.csv",
            "Name,Projected Start (ns),Projected Duration (ns),Orig Start (ns),Orig Duration (ns)\n"
            "run/forward,None,0,1,10\n");
  const NsightEvidence e = load_dir(dir.path());
  EXPECT_EQ(e.status, GpuEvidenceStatus::unavailable);
  ASSERT_EQ(e.diagnostics.size(), 2u);
  EXPECT_THAT(e.diagnostics[0],
              HasSubstr("a_cuda_gpu_trace.csv:2: timeline row `k` has zero duration"));
  EXPECT_THAT(e.diagnostics[1],
              HasSubstr("b_nvtx_gpu_proj_trace.csv:2: projected timeline row `run/forward` has "
                        "invalid projected timing"));
}

TEST(NsightMalformed, BadFileDoesNotHideGoodOnes) {
  TempDir dir;
  dir.copy_shared("cuda_gpu_kern_sum-zihuanxu-db-tpch-q5.csv");
  dir.write("zz_cuda_api_sum.csv", "Time (%),Total Time (ns),Num Calls,Name\n1.0,abc,2,cudaFree\n");
  const NsightEvidence e = load_dir(dir.path());
  EXPECT_EQ(e.status, GpuEvidenceStatus::available);
  EXPECT_EQ(e.kernels.size(), 1u);
  EXPECT_TRUE(e.runtime_calls.empty());
  EXPECT_FALSE(e.coverage.runtime_summary);
  EXPECT_EQ(e.source_csv.size(), 1u);
  ASSERT_EQ(e.diagnostics.size(), 1u);
  EXPECT_THAT(e.diagnostics[0], HasSubstr("zz_cuda_api_sum.csv:2: invalid number `abc`"));
}

TEST(NsightMalformed, BinaryGarbageIsRejectedNotBuffered) {
  TempDir dir;
  std::string garbage(5u << 20, '\x01');  // 5 MiB without a newline or a header
  dir.write("blob.csv", garbage);
  const NsightEvidence e = load_dir(dir.path());
  EXPECT_EQ(e.status, GpuEvidenceStatus::unavailable);
  ASSERT_EQ(e.diagnostics.size(), 1u);
  EXPECT_THAT(e.diagnostics[0], HasSubstr("blob.csv:1: unrecognized report"));
}

TEST(NsightMalformed, MissingAndNonDirectory) {
  const NsightEvidence missing = load_dir("/nonexistent/nsight/dir");
  EXPECT_EQ(missing.status, GpuEvidenceStatus::failed);
  EXPECT_EQ(missing.reason, "Nsight report directory does not exist: /nonexistent/nsight/dir");
  EXPECT_EQ(missing.correlation.reason, "No projected NVTX ranges were normalized");
  TempDir dir;
  const auto file = dir.write("x.csv", "a,b\n");
  const NsightEvidence not_dir = load_dir(file);
  EXPECT_EQ(not_dir.status, GpuEvidenceStatus::failed);
  EXPECT_THAT(*not_dir.reason, HasSubstr("is not a directory"));
}

}  // namespace
