// The trace/6 vocabulary (docs/format/trace6.md §3, §4.12–§4.13): the schema id, the
// enumerations with their wire strings and aliases, dtype sizes and storage bytes. Shared by every
// producer (the C++ probe, the LibTorch capture, convert) and the reader; standard library only.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace candle_graph {

inline constexpr std::string_view kTraceSchema = "candle-graph/trace/6";

// ---- trace6.md §3 enumerations (wire strings are lower snake_case)
// -------------------------------------

enum class ExecutionPhase : std::uint8_t { train, infer };
enum class ExecutionStep : std::uint8_t { forward, backward, optimizer };
enum class SpanKind : std::uint8_t { function, op, module };
enum class TimingMode : std::uint8_t { host, device_synchronized };
enum class GradientState : std::uint8_t { present, missing, zero, non_finite };
enum class MemoryAction : std::uint8_t { alloc, free };
enum class MemoryCategory : std::uint8_t { parameter, activation, gradient, optimizer, other };
// An op's kind (extension field `op_kind`, trace6.md §4.5.1): a host op, a runtime call on the
// host (cudaLaunchKernel, hipMemcpyAsync, …), or work on a device.
enum class OpKind : std::uint8_t { host, runtime, kernel, memcpy, memset, sync };
// kernel, memcpy, memset and sync run on a device; host and runtime on a host thread.
constexpr bool is_device_kind(OpKind k) noexcept {
  return k >= OpKind::kernel;
}

std::string_view to_string(ExecutionPhase v) noexcept;
std::string_view to_string(ExecutionStep v) noexcept;
std::string_view to_string(SpanKind v) noexcept;
std::string_view to_string(TimingMode v) noexcept;
std::string_view to_string(GradientState v) noexcept;
std::string_view to_string(MemoryAction v) noexcept;
std::string_view to_string(MemoryCategory v) noexcept;
std::string_view to_string(OpKind v) noexcept;

// Exact wire strings only (what the trace reader accepts).
std::optional<ExecutionPhase> parse_execution_phase(std::string_view s) noexcept;
std::optional<ExecutionStep> parse_execution_step(std::string_view s) noexcept;
std::optional<SpanKind> parse_span_kind(std::string_view s) noexcept;
std::optional<TimingMode> parse_timing_mode(std::string_view s) noexcept;
std::optional<GradientState> parse_gradient_state(std::string_view s) noexcept;
std::optional<MemoryAction> parse_memory_action(std::string_view s) noexcept;
std::optional<MemoryCategory> parse_memory_category(std::string_view s) noexcept;
std::optional<OpKind> parse_op_kind(std::string_view s) noexcept;

// trace6.md §3 human-friendly aliases (case-insensitive, '-' == '_'): "training", "eval", "bwd",
// "optim"…
std::optional<ExecutionPhase> parse_execution_phase_alias(std::string_view s);
std::optional<ExecutionStep> parse_execution_step_alias(std::string_view s);

// ---- trace6.md §4.12–4.13 sizes and categories
// ---------------------------------------------------------

// Bytes per element of a dtype label (trimmed, ASCII-lowercased); nullopt when unknown.
std::optional<std::uint64_t> dtype_size(std::string_view dtype) noexcept;
// Saturating product of the dimensions, starting from 1 (an empty shape is one element).
std::uint64_t elem_count(std::span<const std::uint64_t> shape) noexcept;
// 0 when some dimension is 0 or the dtype is unknown; saturating otherwise.
std::uint64_t storage_bytes(std::span<const std::uint64_t> shape, std::string_view dtype) noexcept;
std::uint64_t resolve_storage_bytes(std::optional<std::uint64_t> explicit_bytes,
                                    std::span<const std::uint64_t> shape,
                                    std::string_view dtype) noexcept;
MemoryCategory category_for_step(std::optional<ExecutionStep> step, bool requires_grad) noexcept;

}  // namespace candle_graph
