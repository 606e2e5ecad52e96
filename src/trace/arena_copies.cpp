#include "trace/arena_copies.hpp"

#include <algorithm>
#include <cstring>

namespace candle_graph {

std::string_view ArenaCopies::intern(std::string_view s) {
  if (s.empty()) return {};  // what Arena::copy gives for an empty string
  const std::size_t slot = (s.size() * 7 + static_cast<unsigned char>(s.front()) * 3 +
                            static_cast<unsigned char>(s.back())) %
                           interned_recently_.size();
  std::string_view& cached = interned_recently_[slot];
  if (cached.size() == s.size() && std::memcmp(cached.data(), s.data(), s.size()) == 0)
    return cached;
  auto it = interned_.find(s);
  if (it == interned_.end()) {
    const std::string_view owned = arena_->copy(s);
    it = interned_.emplace(owned, owned).first;
  }
  cached = it->second;
  return cached;
}

std::string_view ArenaCopies::recent(std::string_view s) {
  if (s.empty()) return {};
  const std::uint64_t hash = ShortStringHash{}(s);
  RecentId& slot = recent_ids_[hash & (recent_ids_.size() - 1)];
  if (slot.hash != hash || slot.id.size() != s.size() ||
      std::memcmp(slot.id.data(), s.data(), s.size()) != 0)
    slot = {hash, arena_->copy(s)};
  return slot.id;
}

std::span<const std::uint64_t> ArenaCopies::recent(std::span<const std::uint64_t> dims) {
  if (dims.empty()) return {};
  std::uint64_t h = dims.size();
  for (std::uint64_t d : dims) h = ShortStringHash::mix(h ^ d, 0xe7037ed1a0b428dbull);
  std::span<const std::uint64_t>& slot = recent_shapes_[h & (recent_shapes_.size() - 1)];
  if (!std::equal(slot.begin(), slot.end(), dims.begin(), dims.end())) slot = arena_->copy(dims);
  return slot;
}

}  // namespace candle_graph
