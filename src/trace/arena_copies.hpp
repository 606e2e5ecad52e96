// How the document assembler copies strings and shapes into the document's arena without
// keeping one copy per occurrence.
//
// - `intern`: values that repeat all through a trace and have few distinct values (dtype,
//   device, op names): a map of every distinct value, with a small cache in front.
// - `recent`: values that repeat close together but have many distinct values: tensor ids (the
//   op that outputs a tensor, its alloc event and the next op's inputs name it within a few
//   lines) and shapes. Copying every occurrence made those copies a fifth of a parsed document;
//   a map would cost ~70 bytes of node and bucket per distinct value, more than a short id
//   saves. So this cache is direct-mapped and fixed in size: a miss just copies, and memory never
//   grows with the number of distinct values.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <unordered_map>

#include "candle_graph/trace.hpp"
#include "trace/short_string_hash.hpp"

namespace candle_graph {

class ArenaCopies {
 public:
  explicit ArenaCopies(Arena& arena) : arena_(&arena) {}

  // Each returns the same content as its argument, owned by the arena; empty input gives an
  // empty view, as Arena::copy does.
  std::string_view intern(std::string_view s);
  std::string_view recent(std::string_view s);
  std::span<const std::uint64_t> recent(std::span<const std::uint64_t> dims);

 private:
  Arena* arena_;
  std::unordered_map<std::string_view, std::string_view, ShortStringHash> interned_;
  // The fields interned take turns (op_name, dtype, device, …), so a single "last value" missed
  // nearly always: a small direct-mapped cache keyed by length and end bytes catches them.
  std::array<std::string_view, 64> interned_recently_{};
  // 4096 ids cover the tensors a layer or two of ops mention; shapes repeat far more. Each slot
  // keeps its id's hash, so that a slot holding another id is told apart without reading that
  // id's bytes, which lie anywhere in the arena and miss the cache (a quarter of the parallel
  // read's main thread went there).
  struct RecentId {
    std::uint64_t hash = 0;
    std::string_view id;
  };
  std::array<RecentId, 4096> recent_ids_{};
  std::array<std::span<const std::uint64_t>, 512> recent_shapes_{};
};

}  // namespace candle_graph
