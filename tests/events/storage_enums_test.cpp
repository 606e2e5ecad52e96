// trace6.md §4.12 dtype sizes and storage_bytes, §4.13 category_for_step, §3 enum wire strings and
// the human-friendly aliases. Expected values are the spec tables, typed in by hand.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "candle_graph/health.hpp"
#include "candle_graph/trace.hpp"

namespace {

using namespace candle_graph;
constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

TEST(DtypeSize, SpecTable) {
  for (const char* d : {"u8", "i8", "bool", "f8"}) EXPECT_EQ(dtype_size(d), 1u) << d;
  for (const char* d : {"u16", "i16", "f16", "bf16"}) EXPECT_EQ(dtype_size(d), 2u) << d;
  for (const char* d : {"u32", "i32", "f32"}) EXPECT_EQ(dtype_size(d), 4u) << d;
  for (const char* d : {"u64", "i64", "f64"}) EXPECT_EQ(dtype_size(d), 8u) << d;
}

TEST(DtypeSize, TrimmedAndAsciiLowercased) {
  EXPECT_EQ(dtype_size(" F32 "), 4u);
  EXPECT_EQ(dtype_size("\tBF16\n"), 2u);
  EXPECT_EQ(dtype_size("Bool"), 1u);
  EXPECT_EQ(dtype_size("  i64\r"), 8u);
}

TEST(DtypeSize, UnknownLabels) {
  for (const char* d : {"", " ", "f8e4m3", "f8e5m2", "float32", "f 32", "u128", "c64", "f4",
                        "\xC3\x9F"
                        "32",
                        "f32x", "bfloat16"})
    EXPECT_FALSE(dtype_size(d).has_value()) << d;
}

TEST(ElemCount, EmptyShapeIsOneElement) {  // trace6.md §4.12 quirk: a scalar
  EXPECT_EQ(elem_count({}), 1u);
}

TEST(ElemCount, ProductAndSaturation) {
  const std::vector<std::uint64_t> a = {8, 64};
  EXPECT_EQ(elem_count(a), 512u);
  const std::vector<std::uint64_t> zero = {3, 0, 5};
  EXPECT_EQ(elem_count(zero), 0u);
  const std::vector<std::uint64_t> huge = {1ull << 32, 1ull << 32, 2};
  EXPECT_EQ(elem_count(huge), kMax);
  // saturated then multiplied by 0 is 0 (the product is saturating, not sticky)
  const std::vector<std::uint64_t> huge_then_zero = {1ull << 32, 1ull << 32, 0};
  EXPECT_EQ(elem_count(huge_then_zero), 0u);
}

TEST(StorageBytes, Rules) {
  const std::vector<std::uint64_t> s864 = {8, 64};
  EXPECT_EQ(storage_bytes(s864, "f32"), 2048u);  // trace6.md §4.11 example
  EXPECT_EQ(storage_bytes(s864, "bf16"), 1024u);
  const std::vector<std::uint64_t> s3232 = {32, 32};
  EXPECT_EQ(storage_bytes(s3232, "f32"), 4096u);  // trace6.md §14
  const std::vector<std::uint64_t> s100 = {100, 100};
  EXPECT_EQ(storage_bytes(s100, "f32"), 40000u);  // trace6.md §14 memory
  EXPECT_EQ(storage_bytes({}, "f64"), 8u);        // scalar
  const std::vector<std::uint64_t> zero = {0, 4};
  EXPECT_EQ(storage_bytes(zero, "f32"), 0u);
  EXPECT_EQ(storage_bytes(s864, "f8e4m3"), 0u);  // unknown dtype
  EXPECT_EQ(storage_bytes(s864, ""), 0u);
  const std::vector<std::uint64_t> big = {1ull << 62};
  EXPECT_EQ(storage_bytes(big, "f64"), kMax);  // 2^62 × 8 saturates
  EXPECT_EQ(storage_bytes(big, "u8"), 1ull << 62);
}

TEST(StorageBytes, ResolveExplicitWins) {
  const std::vector<std::uint64_t> s = {2, 2};
  EXPECT_EQ(resolve_storage_bytes(std::nullopt, s, "f32"), 16u);
  EXPECT_EQ(resolve_storage_bytes(7, s, "f32"), 7u);
  EXPECT_EQ(resolve_storage_bytes(0, s, "f32"), 0u);
  EXPECT_EQ(resolve_storage_bytes(5, s, "weird"), 5u);
}

TEST(CategoryForStep, SpecTable) {  // trace6.md §4.13
  for (bool rg : {false, true}) {
    EXPECT_EQ(category_for_step(ExecutionStep::backward, rg), MemoryCategory::gradient);
    EXPECT_EQ(category_for_step(ExecutionStep::optimizer, rg), MemoryCategory::optimizer);
    EXPECT_EQ(category_for_step(ExecutionStep::forward, rg), MemoryCategory::activation);
  }
  EXPECT_EQ(category_for_step(std::nullopt, true), MemoryCategory::parameter);
  EXPECT_EQ(category_for_step(std::nullopt, false), MemoryCategory::activation);
}

// trace6.md §3 wire strings: to_string and the strict parser are inverse, value by value.
template <typename E>
void check_wire(const std::vector<std::pair<E, const char*>>& table,
                std::optional<E> (*parse)(std::string_view) noexcept) {
  for (const auto& [value, wire] : table) {
    EXPECT_EQ(to_string(value), wire);
    EXPECT_EQ(parse(wire), value) << wire;
    std::string upper = wire;
    upper[0] = static_cast<char>(upper[0] - 'a' + 'A');
    EXPECT_FALSE(parse(upper).has_value()) << upper;  // exact strings only on the wire
    EXPECT_FALSE(parse(std::string(wire) + " ").has_value()) << wire;
  }
  EXPECT_FALSE(parse("").has_value());
}

TEST(Enums, WireStrings) {
  check_wire<ExecutionPhase>({{ExecutionPhase::train, "train"}, {ExecutionPhase::infer, "infer"}},
                             &parse_execution_phase);
  check_wire<ExecutionStep>({{ExecutionStep::forward, "forward"},
                             {ExecutionStep::backward, "backward"},
                             {ExecutionStep::optimizer, "optimizer"}},
                            &parse_execution_step);
  check_wire<SpanKind>(
      {{SpanKind::function, "function"}, {SpanKind::op, "op"}, {SpanKind::module, "module"}},
      &parse_span_kind);
  check_wire<TimingMode>(
      {{TimingMode::host, "host"}, {TimingMode::device_synchronized, "device_synchronized"}},
      &parse_timing_mode);
  check_wire<GradientState>({{GradientState::present, "present"},
                             {GradientState::missing, "missing"},
                             {GradientState::zero, "zero"},
                             {GradientState::non_finite, "non_finite"}},
                            &parse_gradient_state);
  check_wire<MemoryAction>({{MemoryAction::alloc, "alloc"}, {MemoryAction::free, "free"}},
                           &parse_memory_action);
  check_wire<MemoryCategory>({{MemoryCategory::parameter, "parameter"},
                              {MemoryCategory::activation, "activation"},
                              {MemoryCategory::gradient, "gradient"},
                              {MemoryCategory::optimizer, "optimizer"},
                              {MemoryCategory::other, "other"}},
                             &parse_memory_category);
  EXPECT_EQ(to_string(HealthSeverity::error), "error");
  EXPECT_EQ(to_string(HealthSeverity::warning), "warning");
}

TEST(Enums, WireParsersRejectAliases) {
  EXPECT_FALSE(parse_execution_phase("training").has_value());
  EXPECT_FALSE(parse_execution_step("fwd").has_value());
  EXPECT_FALSE(parse_gradient_state("nonfinite").has_value());  // viewer/4 quirk spelling
  EXPECT_FALSE(parse_timing_mode("device-synchronized").has_value());
}

// trace6.md §3: ExecutionPhase::parse / ExecutionStep::parse (case-insensitive, '-' == '_').
TEST(Enums, PhaseAliases) {
  for (const char* s : {"train", "training", "TRAIN", "Training"})
    EXPECT_EQ(parse_execution_phase_alias(s), ExecutionPhase::train) << s;
  for (const char* s : {"infer", "inference", "eval", "evaluate", "EVAL", "Inference"})
    EXPECT_EQ(parse_execution_phase_alias(s), ExecutionPhase::infer) << s;
  for (const char* s : {"", "test", "predict", "train ", "trainer"})
    EXPECT_FALSE(parse_execution_phase_alias(s).has_value()) << s;
}

TEST(Enums, StepAliases) {
  for (const char* s : {"forward", "fwd", "FORWARD", "Fwd"})
    EXPECT_EQ(parse_execution_step_alias(s), ExecutionStep::forward) << s;
  for (const char* s :
       {"backward", "backward_pass", "backward-pass", "BACKWARD-PASS", "bwd", "backprop"})
    EXPECT_EQ(parse_execution_step_alias(s), ExecutionStep::backward) << s;
  for (const char* s : {"optimizer", "optim", "step", "Step", "OPTIMIZER"})
    EXPECT_EQ(parse_execution_step_alias(s), ExecutionStep::optimizer) << s;
  for (const char* s : {"", "fw", "back", "optimiser", "backwardpass", "backward__pass"})
    EXPECT_FALSE(parse_execution_step_alias(s).has_value()) << s;
}

}  // namespace
