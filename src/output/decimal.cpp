#include "output/decimal.hpp"

namespace candle_graph::output {
namespace {

// Digit writers on 32-bit arithmetic: a u64 is split into at most three groups below 10^8, so
// every division is by a constant (a multiply) on a 32-bit value, and the 3-4 digit numbers a
// trace is full of (durations, byte counts) take two table loads.
inline char* write_4_fixed(char* p, std::uint32_t w) noexcept {  // w < 10^4, zero-padded
  std::memcpy(p, kDigitPairs + (w / 100) * 2, 2);
  std::memcpy(p + 2, kDigitPairs + (w % 100) * 2, 2);
  return p + 4;
}
inline char* write_8_fixed(char* p, std::uint32_t w) noexcept {  // w < 10^8, zero-padded
  write_4_fixed(p, w / 10000);
  return write_4_fixed(p + 4, w % 10000);
}
inline char* write_upto4(char* p, std::uint32_t w) noexcept {  // 0 <= w < 10^4
  if (w < 100) {
    if (w < 10) {
      *p = static_cast<char>('0' + w);
      return p + 1;
    }
    std::memcpy(p, kDigitPairs + w * 2, 2);
    return p + 2;
  }
  const std::uint32_t hi = w / 100;
  if (hi < 10) {
    *p++ = static_cast<char>('0' + hi);
  } else {
    std::memcpy(p, kDigitPairs + hi * 2, 2);
    p += 2;
  }
  std::memcpy(p, kDigitPairs + (w % 100) * 2, 2);
  return p + 2;
}
inline char* write_upto8(char* p, std::uint32_t w) noexcept {  // 0 <= w < 10^8
  if (w < 10000) return write_upto4(p, w);
  return write_4_fixed(write_upto4(p, w / 10000), w % 10000);
}

}  // namespace

char* write_decimal_long(char* p, std::uint64_t v) noexcept {
  constexpr std::uint64_t k8 = 100'000'000;
  if (v < k8) return write_upto8(p, static_cast<std::uint32_t>(v));
  const std::uint64_t hi = v / k8;
  const auto lo = static_cast<std::uint32_t>(v % k8);
  if (hi < k8) {
    p = write_upto8(p, static_cast<std::uint32_t>(hi));
  } else {  // 17-20 digits: hi / 10^8 <= 1844
    p = write_upto4(p, static_cast<std::uint32_t>(hi / k8));
    p = write_8_fixed(p, static_cast<std::uint32_t>(hi % k8));
  }
  return write_8_fixed(p, lo);
}

}  // namespace candle_graph::output
