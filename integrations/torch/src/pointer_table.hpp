// An open-addressing hash table keyed by a non-null pointer, for the per-op lookups of the
// recorder (allocator blocks by data pointer, op names by name pointer).
//
// Why not std::unordered_map: it allocates a node on every insert and frees it on every erase,
// so the allocator reporter's own bookkeeping called malloc/free once per block of the measured
// update (interleaved with LibTorch's allocations), and each lookup pays a modulo by a prime.
// Here a lookup is one multiply, a shift and a short linear probe in one array; erase shifts the
// following entries back (no tombstones), so the table never degrades over a long capture. The
// array only grows when it is half full, which a preallocated table never is during an update.
// Tests: tests/pointer_table_test.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace candle_graph::libtorch::detail {

template <typename Value>
class PointerTable {
 public:
  struct Slot {
    const void* key = nullptr;  // nullptr = empty
    Value value{};
  };

  explicit PointerTable(std::size_t capacity = 16) { rehash(round_up(capacity)); }

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }

  // The value stored under `key`, or nullptr.
  Value* find(const void* key) noexcept {
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.key == key) return &s.value;
      if (s.key == nullptr) return nullptr;
    }
  }

  // Inserts `value` under `key` (which must not be present) and returns the stored value.
  Value& insert(const void* key, const Value& value) {
    if ((size_ + 1) * 2 > slots_.size()) [[unlikely]]
      rehash(slots_.size() * 2);
    std::size_t i = home(key);
    while (slots_[i].key != nullptr) i = (i + 1) & mask_;
    slots_[i].key = key;
    slots_[i].value = value;
    ++size_;
    return slots_[i].value;
  }

  // Removes `key` if present (backward-shift deletion: every later entry of the probe run that
  // may move closer to its home slot does, so no tombstone is left behind).
  // Out of line: one copy of the shifting loop serves every caller (code size of the callbacks).
  [[gnu::noinline]] void erase(const void* key) noexcept {
    std::size_t i = home(key);
    while (slots_[i].key != key) {
      if (slots_[i].key == nullptr) return;
      i = (i + 1) & mask_;
    }
    for (std::size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
      if (slots_[j].key == nullptr) break;
      const std::size_t h = home(slots_[j].key);
      // slots_[j] may move to the hole at i unless its home lies cyclically in (i, j].
      if (((j - h) & mask_) >= ((j - i) & mask_)) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = Slot{};
    --size_;
  }

  // Removes every entry; keeps the capacity.
  void clear() noexcept {
    for (Slot& s : slots_) s = Slot{};
    size_ = 0;
  }

  // Makes room for `n` entries without growing (and touches the array once, outside any
  // measured region).
  void reserve(std::size_t n) {
    if (n * 2 > slots_.size()) rehash(round_up(n * 2));
  }

  // The slot array, for reading it into the cache ahead of use.
  const void* data() const noexcept { return slots_.data(); }
  std::size_t bytes() const noexcept { return slots_.size() * sizeof(Slot); }

  template <typename F>
  void for_each(F&& f) {
    for (Slot& s : slots_)
      if (s.key != nullptr) f(s.key, s.value);
  }

 private:
  static std::size_t round_up(std::size_t n) {
    std::size_t c = 16;
    while (c < n) c *= 2;
    return c;
  }
  std::size_t home(const void* key) const noexcept {
    // Fibonacci hashing of the address: the top bits of the product mix every address bit
    // (allocator blocks are 16- or 64-byte aligned, so the low bits alone would collide).
    const auto x = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(key));
    return static_cast<std::size_t>((x * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  [[gnu::cold, gnu::noinline]] void rehash(std::size_t capacity) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    shift_ = 64;
    for (std::size_t c = capacity; c > 1; c >>= 1) --shift_;
    size_ = 0;
    for (const Slot& s : old)
      if (s.key != nullptr) insert(s.key, s.value);
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  unsigned shift_ = 64;
  std::size_t size_ = 0;
};

}  // namespace candle_graph::libtorch::detail
