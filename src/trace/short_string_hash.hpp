// A cheap hash for the short ids and names of a trace. std::hash<string_view> runs a full
// out-of-line murmur per string; callgrind showed it at ~3% of read + validate + health.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace candle_graph {

// 8 bytes at a time, each word folded in by a 64×64→128-bit multiply (the wyhash mixing step).
struct ShortStringHash {
  static std::uint64_t mix(std::uint64_t a, std::uint64_t b) noexcept {
    const unsigned __int128 m = static_cast<unsigned __int128>(a) * b;
    return static_cast<std::uint64_t>(m) ^ static_cast<std::uint64_t>(m >> 64);
  }
  std::size_t operator()(std::string_view s) const noexcept {
    constexpr std::uint64_t k0 = 0xa0761d6478bd642full, k1 = 0xe7037ed1a0b428dbull;
    std::uint64_t h = k0 ^ s.size();
    const char* p = s.data();
    std::size_t n = s.size();
    for (; n >= 8; p += 8, n -= 8) {
      std::uint64_t w;
      std::memcpy(&w, p, 8);
      h = mix(h ^ w, k1);
    }
    // The last 0-7 bytes in at most two loads (as wyhash reads them): copying them byte by byte
    // into a word and then loading that word stalls on store forwarding, which made this the
    // hottest line of the parallel read's main thread. The length is already in h.
    std::uint64_t w = 0;
    if (n >= 4) {
      std::uint32_t a, b;
      std::memcpy(&a, p, 4);
      std::memcpy(&b, p + n - 4, 4);
      w = (static_cast<std::uint64_t>(a) << 32) | b;
    } else if (n != 0) {
      const auto byte = [&](std::size_t i) {
        return static_cast<std::uint64_t>(static_cast<unsigned char>(p[i]));
      };
      w = (byte(0) << 16) | (byte(n >> 1) << 8) | byte(n - 1);
    }
    return mix(h ^ w, k1);
  }
};

}  // namespace candle_graph
