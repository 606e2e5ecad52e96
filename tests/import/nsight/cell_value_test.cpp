// Cell parsing: nulls, thousands separators, units, RFC-4180 quoting (trace6.md §10.4, §6.1/§6.3).
#include <gtest/gtest.h>

#include "import/nsight/cell_value.hpp"
#include "import/nsight/csv_reader.hpp"
#include "import/nsight/kernel_category.hpp"
#include "import/nsight/nvtx_label.hpp"

namespace {

using namespace candle_graph::import::nsight;

std::optional<std::uint64_t> value(std::string_view cell, std::string_view unit = "ns") {
  const CellNumber n = parse_cell_number(cell, unit_scale(unit));
  if (n.state == CellNumber::State::value) return n.value;
  return std::nullopt;
}

TEST(NsightCells, NullMarkers) {
  for (auto cell : {"", "  ", "None", "none", "-", "N/A", "NULL"}) {
    EXPECT_EQ(parse_cell_number(cell, unit_scale("ns")).state, CellNumber::State::null) << cell;
  }
}

TEST(NsightCells, NumbersAndSeparators) {
  EXPECT_EQ(value("17081723060"), 17081723060u);
  EXPECT_EQ(value("6100615.4"), 6100615u);  // truncated like the original
  EXPECT_EQ(value("3,481,709"), 3481709u);  // `column` format thousands separators
  EXPECT_EQ(value(" 1,234.5 "), 1234u);
  EXPECT_EQ(value("482,3"), 482u);  // locale decimal comma
  EXPECT_EQ(value("-5"), 0u);       // clamped at 0
  EXPECT_EQ(value("1e3"), 1000u);
  EXPECT_EQ(value("99999999999999999999999"), UINT64_MAX);  // saturates
  for (auto bad : {"abc", "12abc", "1.2.3", "e5", "--1"}) {
    EXPECT_EQ(parse_cell_number(bad, unit_scale("ns")).state, CellNumber::State::invalid) << bad;
  }
}

TEST(NsightCells, UnitsConvertExactly) {
  EXPECT_EQ(value("1.234567", "sec"), 1234567000u);  // 2021 gputrace `Start(sec)` as %.6f
  EXPECT_EQ(value("0.000001", "s"), 1000u);
  EXPECT_EQ(value("2.5", "us"), 2500u);
  EXPECT_EQ(value("7", "ms"), 7000000u);
  EXPECT_EQ(value("4.194", "mb"), 4194000u);  // nsys MB = 10^6 bytes
  EXPECT_EQ(value("1", "kib"), 1024u);
  EXPECT_EQ(unit_scale("furlong").kind, UnitKind::other);
}

TEST(NsightCsv, QuotedFieldsWithCommasAndDoubledQuotes) {
  const auto f = split_csv_line(R"csv(1,"void k<int, float>(""a,b"")",,x)csv");
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[1], R"csv(void k<int, float>("a,b"))csv");
  EXPECT_EQ(f[2], "");
  CsvSplitter multi;
  EXPECT_FALSE(multi.feed(R"(1,"first)"));
  EXPECT_TRUE(multi.feed(R"(second",2)"));
  ASSERT_EQ(multi.fields.size(), 3u);
  EXPECT_EQ(multi.fields[1], "first\nsecond");
}

TEST(NsightLabels, DomainPrefixesStrippedButScopesKept) {
  EXPECT_EQ(strip_nvtx_domain(":measured_request"), "measured_request");
  EXPECT_EQ(strip_nvtx_domain("TSL:Thunk:#hlo_op=copy.1328#"), "Thunk:#hlo_op=copy.1328#");
  EXPECT_EQ(strip_nvtx_domain("demo::train::update"), "demo::train::update");
  EXPECT_EQ(strip_nvtx_domain(":demo::train::update"), "demo::train::update");
  EXPECT_EQ(strip_nvtx_domain("run/forward"), "run/forward");
  const std::unordered_set<std::string> keys{"demo::train::update", "copy_in"};
  EXPECT_TRUE(semantic_label("demo::train::update", keys).matched);
  EXPECT_TRUE(semantic_label("mydomain:copy_in", keys).matched);
  EXPECT_EQ(semantic_label(":copy_out", keys).key, "copy_out");
  EXPECT_FALSE(semantic_label(":copy_out", keys).matched);
}

TEST(NsightKernelCategory, TypicalNames) {
  EXPECT_EQ(kernel_category("sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64"), "gemm");
  EXPECT_EQ(kernel_category("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_tn"), "gemm");
  EXPECT_EQ(kernel_category("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevComm *)"),
            "communication");
  EXPECT_EQ(kernel_category("cudnn_generated_fmha_knob_26_64x64x128_1x4x1_kernel0_0"), "attention");
  EXPECT_EQ(kernel_category("void cudnn::detail::implicit_convolve_sgemm<float, 1024>(int)"),
            "convolution");
  EXPECT_EQ(kernel_category("void at::native::vectorized_elementwise_kernel<4, "
                            "at::native::FillFunctor<int>>(int, T2, T3)"),
            "elementwise");
  EXPECT_EQ(kernel_category("void paddle::operators::MatrixColReduce<float, 32, 32>(float const*)"),
            "reduction");
  EXPECT_EQ(kernel_category("rms_norm_q"), "normalization");
  EXPECT_EQ(kernel_category("[CUDA memcpy Host-to-Device]"), "memcpy");
  EXPECT_EQ(kernel_category("[CUDA memcpy HtoD]"), "memcpy");
  EXPECT_EQ(kernel_category("[CUDA memset]"), "memset");
  EXPECT_EQ(kernel_category("TSL:Thunk:#hlo_op=convert.145#"), "elementwise");  // not convolution
  EXPECT_EQ(kernel_category("void paddle::operators::AdamKernelMEM<float, float>(float)"), "other");
}

}  // namespace
