// memcpy for the short strings of trace lines and JSON keys without a library call (whose size
// dispatch is a measurable part of a ~100 ns event): two overlapping fixed-size moves cover
// every length up to 16 bytes; longer strings go to memcpy. Reads and writes exactly n bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace candle_graph::output {

inline void copy_short(char* dst, const char* src, std::size_t n) noexcept {
  if (n >= 8 && n <= 16) {
    std::uint64_t a, b;
    std::memcpy(&a, src, 8);
    std::memcpy(&b, src + n - 8, 8);
    std::memcpy(dst, &a, 8);
    std::memcpy(dst + n - 8, &b, 8);
  } else if (n >= 4 && n < 8) {
    std::uint32_t a, b;
    std::memcpy(&a, src, 4);
    std::memcpy(&b, src + n - 4, 4);
    std::memcpy(dst, &a, 4);
    std::memcpy(dst + n - 4, &b, 4);
  } else if (n > 0 && n < 4) {
    dst[0] = src[0];
    dst[n / 2] = src[n / 2];
    dst[n - 1] = src[n - 1];
  } else if (n > 16) {
    std::memcpy(dst, src, n);
  }
}

}  // namespace candle_graph::output
