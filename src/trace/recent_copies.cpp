#include "trace/recent_copies.hpp"

#include <algorithm>
#include <cstring>

#include "trace/short_string_hash.hpp"

namespace candle_graph {

std::string_view RecentCopies::copy(std::string_view s) {
  if (s.empty()) return {};
  std::string_view& slot = ids_[ShortStringHash{}(s) & (ids_.size() - 1)];
  if (slot.size() != s.size() || std::memcmp(slot.data(), s.data(), s.size()) != 0)
    slot = arena_->copy(s);
  return slot;
}

std::span<const std::uint64_t> RecentCopies::copy(std::span<const std::uint64_t> dims) {
  if (dims.empty()) return {};
  std::uint64_t h = dims.size();
  for (std::uint64_t d : dims) h = ShortStringHash::mix(h ^ d, 0xe7037ed1a0b428dbull);
  std::span<const std::uint64_t>& slot = shapes_[h & (shapes_.size() - 1)];
  if (!std::equal(slot.begin(), slot.end(), dims.begin(), dims.end())) slot = arena_->copy(dims);
  return slot;
}

}  // namespace candle_graph
