// Arena copies that share one copy of a value seen recently: tensor ids and shapes.
//
// A trace names each tensor several times close together (the op that outputs it, its alloc
// event, the next op's inputs) and repeats a handful of shapes thousands of times. Copying every
// occurrence made those copies a fifth of a parsed document. A full interning map would cost
// ~70 bytes of node and bucket per distinct value, more than a short id it saves, so the cache is
// direct-mapped and fixed in size: a miss just copies, as before, and memory never grows with
// the number of distinct values.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "candle_graph/trace.hpp"

namespace candle_graph {

class RecentCopies {
 public:
  explicit RecentCopies(Arena& arena) : arena_(&arena) {}

  // Same content as `s` (or `dims`), owned by the arena; empty input gives an empty view, as
  // Arena::copy does.
  std::string_view copy(std::string_view s);
  std::span<const std::uint64_t> copy(std::span<const std::uint64_t> dims);

 private:
  Arena* arena_;
  // 4096 ids cover the tensors a layer or two of ops mention; shapes repeat far more.
  std::array<std::string_view, 4096> ids_{};
  std::array<std::span<const std::uint64_t>, 512> shapes_{};
};

}  // namespace candle_graph
