// The live allocations of a memory replay (health checks 11–13, trace6.md §7.1 step 2): an
// open-addressing table (linear probing, backward-shift deletion, no tombstones) keyed by a tensor
// id, whose slots carry what a lookup needs, so a hit reads no memory event.
//
// Why: on a 300 MB trace the live set outgrows the caches while the event stream streams
// through them, and a slot that only named its alloc event cost three cache misses per free
// (the slot, the alloc event for the id's length, the id's bytes) — the replays of health and
// of the memory profile scaled 20× for 10× the input. A 16-byte slot holding the id's hash, its
// first 7 bytes and its length settles every id of up to 7 bytes (the usual `t12345`) from the
// slot alone; longer ids are compared in full through the caller's `same(slot_event,
// probe_event)`. (Slots of 24 bytes with 8 id bytes pushed `validate` past its RSS budget: the
// synth trace of 295 MB has 240 k tensors live at once.)
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "candle_graph/trace.hpp"
#include "output/copy_short.hpp"
#include "trace/huge_pages.hpp"
#include "trace/short_string_hash.hpp"

namespace candle_graph::detail {

// What a slot knows of a key: a hash of the whole id (and of the caller's `salt`) and one word
// holding the id's first 7 bytes and its length, or 0xFF in the length byte for ids of 8 bytes
// or more. Ids of at most 7 bytes are equal exactly when their words are; `settles` (not kept
// in the slot) says the caller accepts that, i.e. nothing but the id tells its keys apart.
struct LiveKey {
  std::uint64_t word = 0;
  std::uint32_t hash = 0;
  bool settles = false;

  static constexpr std::size_t kShort = 7;

  // `salt` is mixed into the hash only; a caller whose keys include more than the id (health:
  // the device) passes `may_settle = false` unless that part is the same for every key.
  static LiveKey of(std::string_view id, std::uint64_t salt = 0, bool may_settle = true) noexcept {
    LiveKey k;
    unsigned char window[8] = {};
    // copy_short: an empty id (`"tensor_id":""`) may have no data at all, and memcpy from null
    // is undefined even for 0 bytes.
    output::copy_short(reinterpret_cast<char*>(window), id.data(), std::min(id.size(), kShort));
    window[7] = id.size() <= kShort ? static_cast<unsigned char>(id.size()) : 0xFF;
    std::memcpy(&k.word, window, 8);
    const std::uint64_t h = ShortStringHash{}(id) ^ (salt * 0x9e3779b97f4a7c15ULL);
    k.hash = static_cast<std::uint32_t>(h ^ (h >> 32));
    k.settles = may_settle && id.size() <= kShort;
    return k;
  }
};

// `Value` rides along in the slot (the memory profile keeps the alloc's bytes and category
// there); `Empty` for none.
struct Empty {};

template <typename Value = Empty>
class LiveKeyTable {
 public:
  struct Entry {
    std::uint32_t event = kNoIndex;  // kNoIndex: no entry
    Value value{};
  };

  LiveKeyTable() {
    slots_.assign(64, Slot{});
    mask_ = slots_.size() - 1;
  }

  // Inserts `event` under `key` unless an equal key is live; returns the live entry that kept
  // its place (event kNoIndex when the insert happened).
  template <typename Same>
  Entry insert(std::uint32_t event, const LiveKey& key, const Value& value, Same&& same) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    Slot& s = find_or_empty(key, event, same);
    if (s.event != kEmpty) return {s.event, s.value};
    s = {key.word, key.hash, event, value};
    ++size_;
    return {};
  }

  // Makes `event` the live entry of `key` (inserting or replacing); returns the entry it
  // replaced (event kNoIndex when there was none).
  template <typename Same>
  Entry put(std::uint32_t event, const LiveKey& key, const Value& value, Same&& same) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    Slot& s = find_or_empty(key, event, same);
    const Entry old = s.event == kEmpty ? Entry{} : Entry{s.event, s.value};
    if (s.event == kEmpty) ++size_;
    s = {key.word, key.hash, event, value};
    return old;
  }

  // Removes the entry equal to (`key`, `probe_event`) and returns it (event kNoIndex when none
  // is live).
  template <typename Same>
  Entry take(const LiveKey& key, std::uint32_t probe_event, Same&& same) {
    Slot* s = &find_or_empty(key, probe_event, same);
    if (s->event == kEmpty) return {};
    const Entry found{s->event, s->value};
    // Backward shift: move later entries of the probe run into the hole when the hole lies
    // between their home slot and their current slot (cyclically).
    std::size_t i = static_cast<std::size_t>(s - slots_.data());
    for (std::size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
      const Slot& t = slots_[j];
      if (t.event == kEmpty) break;
      const std::size_t home = t.hash & mask_;
      if (((j - home) & mask_) >= ((j - i) & mask_)) {
        slots_[i] = t;
        i = j;
      }
    }
    slots_[i] = Slot{};
    --size_;
    return found;
  }

  // Starts loading the home slot of `key`. Replays call it a few events ahead: the live set of a
  // large trace does not stay in cache while the events stream through, and a hash lookup would
  // otherwise wait for its slot on every alloc and free.
  void prefetch(const LiveKey& key) const noexcept {
    __builtin_prefetch(&slots_[key.hash & mask_]);
  }

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }

  // Frees the slots (a large live set's table is tens of MB): the table is empty and unusable
  // afterwards, for a replay that is done with it before it builds what it keeps.
  void release() noexcept {
    std::vector<Slot>().swap(slots_);
    mask_ = 0;
    size_ = 0;
  }

  // Visits every live entry in slot order (which callers must not rely on).
  template <typename F>
  void for_each(F&& f) const {
    for (const Slot& s : slots_)
      if (s.event != kEmpty) f(Entry{s.event, s.value});
  }

 private:
  static constexpr std::uint32_t kEmpty = kNoIndex;
  // 16 bytes without a value, 32 with the memory profile's 12-byte one.
  struct Slot {
    std::uint64_t word = 0;
    std::uint32_t hash = 0;
    std::uint32_t event = kEmpty;
    [[no_unique_address]] Value value{};
  };

  template <typename Same>
  Slot& find_or_empty(const LiveKey& key, std::uint32_t probe_event, Same& same) {
    for (std::size_t i = key.hash & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.event == kEmpty) return s;
      if (s.hash == key.hash && s.word == key.word && (key.settles || same(s.event, probe_event)))
        return s;
    }
  }

  void grow() {
    std::vector<Slot> old;
    reserve_in_huge_pages(old, 2 * slots_.size());  // a large live set: fewer page faults
    old.resize(2 * slots_.size());
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.event == kEmpty) continue;
      std::size_t i = s.hash & mask_;
      while (slots_[i].event != kEmpty) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

// The keys of a replay's events, computed `kDistance` events ahead so that each one's home slot
// is prefetched while the replay is still busy with the events before it. `key_at(p)` gives the
// key of the event at replay position p.
template <typename KeyAt>
class KeysAhead {
 public:
  static constexpr std::size_t kDistance = 16;

  template <typename Table>
  KeysAhead(std::size_t count, KeyAt key_at, const Table& table)
      : count_(count), key_at_(std::move(key_at)) {
    for (std::size_t p = 0; p < std::min(count_, kDistance); ++p) {
      ring_[p] = key_at_(p);
      table.prefetch(ring_[p]);
    }
  }

  // The key at position `p` (called for p = 0, 1, 2, … in turn); prefetches the one kDistance on.
  template <typename Table>
  LiveKey next(std::size_t p, const Table& table) {
    LiveKey& slot = ring_[p % kDistance];
    const LiveKey key = slot;
    if (p + kDistance < count_) {
      slot = key_at_(p + kDistance);
      table.prefetch(slot);
    }
    return key;
  }

 private:
  std::size_t count_;
  KeyAt key_at_;
  std::array<LiveKey, kDistance> ring_{};
};

}  // namespace candle_graph::detail
