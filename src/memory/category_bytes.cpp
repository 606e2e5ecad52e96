// trace6.md §7.1 `by_category` maps as a fixed array: five categories, keys created on first use.
#include "candle_graph/memory.hpp"

namespace candle_graph {

void CategoryBytes::add(MemoryCategory c, std::uint64_t bytes) noexcept {
  auto& v = bytes_[index(c)];
  v = v + bytes < v ? UINT64_MAX : v + bytes;  // saturating: a u64 sum must not wrap
  present_ |= static_cast<std::uint8_t>(1u << index(c));
}

void CategoryBytes::subtract(MemoryCategory c, std::uint64_t bytes) noexcept {
  auto& v = bytes_[index(c)];
  v = v > bytes ? v - bytes : 0;
  present_ |= static_cast<std::uint8_t>(1u << index(c));
}

std::vector<MemoryCategory> CategoryBytes::keys() const {
  std::vector<MemoryCategory> out;
  for_each([&](MemoryCategory c, std::uint64_t) { out.push_back(c); });
  return out;
}

}  // namespace candle_graph
