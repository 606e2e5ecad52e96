// trace6.md §4.12 dtype sizes and storage_bytes, §4.13 category_for_step.
#include <limits>

#include "candle_graph/trace_format.hpp"

namespace candle_graph {
namespace {

std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) noexcept {
  std::uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<std::uint64_t>::max() : r;
}

bool is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

}  // namespace

std::optional<std::uint64_t> dtype_size(std::string_view dtype) noexcept {
  while (!dtype.empty() && is_space(dtype.front())) dtype.remove_prefix(1);
  while (!dtype.empty() && is_space(dtype.back())) dtype.remove_suffix(1);
  if (dtype.size() > 4) return std::nullopt;
  char buf[4];
  for (std::size_t i = 0; i < dtype.size(); ++i) {
    char c = dtype[i];
    buf[i] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  const std::string_view d(buf, dtype.size());
  if (d == "u8" || d == "i8" || d == "bool" || d == "f8") return 1;
  if (d == "u16" || d == "i16" || d == "f16" || d == "bf16") return 2;
  if (d == "u32" || d == "i32" || d == "f32") return 4;
  if (d == "u64" || d == "i64" || d == "f64") return 8;
  return std::nullopt;
}

std::uint64_t elem_count(std::span<const std::uint64_t> shape) noexcept {
  std::uint64_t n = 1;
  for (std::uint64_t d : shape) n = saturating_mul(n, d);
  return n;
}

std::uint64_t storage_bytes(std::span<const std::uint64_t> shape, std::string_view dtype) noexcept {
  const std::uint64_t n = elem_count(shape);
  const auto size = dtype_size(dtype);
  if (n == 0 || !size) return 0;
  return saturating_mul(n, *size);
}

std::uint64_t resolve_storage_bytes(std::optional<std::uint64_t> explicit_bytes,
                                    std::span<const std::uint64_t> shape,
                                    std::string_view dtype) noexcept {
  return explicit_bytes ? *explicit_bytes : storage_bytes(shape, dtype);
}

MemoryCategory category_for_step(std::optional<ExecutionStep> step, bool requires_grad) noexcept {
  if (step) {
    switch (*step) {
      case ExecutionStep::backward:
        return MemoryCategory::gradient;
      case ExecutionStep::optimizer:
        return MemoryCategory::optimizer;
      case ExecutionStep::forward:
        return MemoryCategory::activation;
    }
  }
  return requires_grad ? MemoryCategory::parameter : MemoryCategory::activation;
}

}  // namespace candle_graph
