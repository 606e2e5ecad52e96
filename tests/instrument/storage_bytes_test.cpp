// The session's fast storage-bytes resolution must agree with the trace core's
// resolve_storage_bytes (trace6.md §4.12) for every label, including ones only the slow path knows.
#include <gtest/gtest.h>

#include <array>
#include <limits>
#include <vector>

#include "candle_graph/trace.hpp"
#include "instrument/session_state.hpp"

namespace candle_graph {
namespace {

TEST(RecordStorageBytes, AgreesWithTheTraceCoreForEveryLabelAndShape) {
  const std::vector<std::string_view> labels = {
      "f32", "f16", "bf16", "f64",  "f8",   "i8",   "u8",    "i16",  "u16",
      "i32", "u32", "i64",  "u64",  "bool", "F32",  " f32 ", "BF16", "f8e4m3",
      "",    "x",   "f3",   "f322", "b16",  "i128", "boo"};
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  const std::vector<std::vector<std::uint64_t>> shapes = {
      {},           {0},
      {32, 32},     {8, 0, 3},
      {kMax, 2},    {1u << 31, 1u << 31, 4},
      {kMax, 2, 0}, {1ull << 40, 1ull << 40, 0, 5}};  // a 0 after the count saturated
  for (std::string_view label : labels)
    for (const auto& shape : shapes) {
      EXPECT_EQ(detail::resolve_record_bytes(std::nullopt, shape, label),
                resolve_storage_bytes(std::nullopt, shape, label))
          << "dtype '" << label << "' rank " << shape.size();
      EXPECT_EQ(detail::resolve_record_bytes(77, shape, label), 77u);
    }
}

}  // namespace
}  // namespace candle_graph
