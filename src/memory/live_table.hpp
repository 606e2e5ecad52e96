// §7.1 step 2 live allocations keyed by tensor_id: an open-addressing table (linear probing,
// backward-shift deletion) of memory-event indices. std::unordered_map<string_view, …> cost a
// node allocation and a murmur hash per alloc (~25% of analyze_memory in callgrind) and ~50 B
// per live tensor; this is 8 B per slot and never allocates after construction.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "candle_graph/trace.hpp"
#include "trace/short_string_hash.hpp"

namespace candle_graph::memory {

class LiveTable {
 public:
  // The table starts small and doubles when half full: it is sized by the live set, not by the
  // number of allocations, so it stays in cache (sized for every alloc of a 300 MB trace it was
  // 8 MB, and the slot loads were cache misses: 65% of analyze_memory in perf).
  explicit LiveTable(const std::vector<MemoryEvent>& events) : events_(events) {
    slots_.assign(64, Slot{kEmpty, 0});
    mask_ = slots_.size() - 1;
  }

  // Makes `event` the live allocation of its tensor id (inserting or replacing).
  void put(std::uint32_t event) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    const std::string_view id = events_[event].tensor_id;
    const auto h = static_cast<std::uint32_t>(ShortStringHash{}(id));
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.event == kEmpty) {
        s = {event, h};
        ++size_;
        return;
      }
      if (s.hash == h && events_[s.event].tensor_id == id) {
        s.event = event;
        return;
      }
    }
  }

  // Removes the entry of `id` and returns its event index, or kNoIndex when it is not live.
  std::uint32_t take(std::string_view id) {
    const auto h = static_cast<std::uint32_t>(ShortStringHash{}(id));
    std::size_t i = h & mask_;
    for (;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.event == kEmpty) return kNoIndex;
      if (s.hash == h && events_[s.event].tensor_id == id) break;
    }
    const std::uint32_t found = slots_[i].event;
    // Backward shift: move later entries of the probe run into the hole when the hole lies
    // between their home slot and their current slot (cyclically).
    for (std::size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
      const Slot& s = slots_[j];
      if (s.event == kEmpty) break;
      const std::size_t home = s.hash & mask_;
      if (((j - home) & mask_) >= ((j - i) & mask_)) {
        slots_[i] = s;
        i = j;
      }
    }
    slots_[i] = Slot{kEmpty, 0};
    --size_;
    return found;
  }

  std::size_t size() const noexcept { return size_; }

  void clear() {
    std::fill(slots_.begin(), slots_.end(), Slot{kEmpty, 0});
    size_ = 0;
  }

  // Visits the event index of every live entry (in slot order, which callers must not rely on).
  template <typename F>
  void for_each(F&& f) const {
    for (const Slot& s : slots_)
      if (s.event != kEmpty) f(s.event);
  }

 private:
  void grow() {
    std::vector<Slot> old(2 * slots_.size(), Slot{kEmpty, 0});
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.event == kEmpty) continue;
      std::size_t i = s.hash & mask_;
      while (slots_[i].event != kEmpty) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }

  static constexpr std::uint32_t kEmpty = 0xFFFFFFFFu;
  struct Slot {
    std::uint32_t event;
    std::uint32_t hash;
  };
  const std::vector<MemoryEvent>& events_;
  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace candle_graph::memory
