// Saturating sums for durations and byte counts: a trace may state any u64, and a total that
// wrapped around would turn the largest figure into the smallest.
#pragma once

#include <cstdint>
#include <limits>

namespace candle_graph {

inline std::uint64_t sat_add(std::uint64_t a, std::uint64_t b) noexcept {
  std::uint64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<std::uint64_t>::max() : sum;
}

}  // namespace candle_graph
