// trace6.md §3 enumerations: wire strings and the human-friendly aliases of
// ExecutionPhase/ExecutionStep.
#include <algorithm>
#include <array>
#include <string>

#include "candle_graph/trace_format.hpp"

namespace candle_graph {
namespace {

template <typename E, std::size_t N>
std::optional<E> lookup(const std::array<std::string_view, N>& names, std::string_view s) noexcept {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == s) return static_cast<E>(i);
  return std::nullopt;
}

constexpr std::array<std::string_view, 2> kPhase = {"train", "infer"};
constexpr std::array<std::string_view, 3> kStep = {"forward", "backward", "optimizer"};
constexpr std::array<std::string_view, 3> kSpanKind = {"function", "op", "module"};
constexpr std::array<std::string_view, 2> kTiming = {"host", "device_synchronized"};
constexpr std::array<std::string_view, 4> kGradient = {"present", "missing", "zero", "non_finite"};
constexpr std::array<std::string_view, 2> kAction = {"alloc", "free"};
constexpr std::array<std::string_view, 6> kOpKind = {"host",   "runtime", "kernel",
                                                     "memcpy", "memset",  "sync"};
constexpr std::array<std::string_view, 5> kCategory = {"parameter", "activation", "gradient",
                                                       "optimizer", "other"};

// ASCII-lowercase with '-' folded to '_' (the alias rules of trace6.md §3).
std::string fold(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c == '-') c = '_';
  }
  return out;
}

}  // namespace

// One line per enum, read as a table.
// clang-format off
std::string_view to_string(ExecutionPhase v) noexcept { return kPhase[static_cast<int>(v)]; }
std::string_view to_string(ExecutionStep v) noexcept { return kStep[static_cast<int>(v)]; }
std::string_view to_string(SpanKind v) noexcept { return kSpanKind[static_cast<int>(v)]; }
std::string_view to_string(TimingMode v) noexcept { return kTiming[static_cast<int>(v)]; }
std::string_view to_string(GradientState v) noexcept { return kGradient[static_cast<int>(v)]; }
std::string_view to_string(MemoryAction v) noexcept { return kAction[static_cast<int>(v)]; }
std::string_view to_string(MemoryCategory v) noexcept { return kCategory[static_cast<int>(v)]; }
std::string_view to_string(OpKind v) noexcept { return kOpKind[static_cast<int>(v)]; }
// clang-format on

std::optional<ExecutionPhase> parse_execution_phase(std::string_view s) noexcept {
  return lookup<ExecutionPhase>(kPhase, s);
}
std::optional<ExecutionStep> parse_execution_step(std::string_view s) noexcept {
  return lookup<ExecutionStep>(kStep, s);
}
std::optional<SpanKind> parse_span_kind(std::string_view s) noexcept {
  return lookup<SpanKind>(kSpanKind, s);
}
std::optional<TimingMode> parse_timing_mode(std::string_view s) noexcept {
  return lookup<TimingMode>(kTiming, s);
}
std::optional<GradientState> parse_gradient_state(std::string_view s) noexcept {
  return lookup<GradientState>(kGradient, s);
}
std::optional<MemoryAction> parse_memory_action(std::string_view s) noexcept {
  return lookup<MemoryAction>(kAction, s);
}
std::optional<OpKind> parse_op_kind(std::string_view s) noexcept {
  return lookup<OpKind>(kOpKind, s);
}
std::optional<MemoryCategory> parse_memory_category(std::string_view s) noexcept {
  return lookup<MemoryCategory>(kCategory, s);
}

std::optional<ExecutionPhase> parse_execution_phase_alias(std::string_view s) {
  const std::string f = fold(s);
  if (f == "train" || f == "training") return ExecutionPhase::train;
  if (f == "infer" || f == "inference" || f == "eval" || f == "evaluate")
    return ExecutionPhase::infer;
  return std::nullopt;
}

std::optional<ExecutionStep> parse_execution_step_alias(std::string_view s) {
  const std::string f = fold(s);
  if (f == "forward" || f == "fwd") return ExecutionStep::forward;
  if (f == "backward" || f == "backward_pass" || f == "bwd" || f == "backprop")
    return ExecutionStep::backward;
  if (f == "optimizer" || f == "optim" || f == "step") return ExecutionStep::optimizer;
  return std::nullopt;
}

}  // namespace candle_graph
