// The memory profile (docs/format/trace6.md §7.1): live bytes over time per device and category,
// the peak and what was live at it, per-device statistics. Only `memory` events drive lifetimes.
//
// Lifetime: a MemoryProfile holds string views into the TraceDocument it was built from, so the
// document must outlive it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "candle_graph/trace_document.hpp"

namespace candle_graph {

// A `by_category` map: live bytes per category, keyed by the lowercase category name. Only the
// categories a device ever allocated are present (a map entry is created on first use).
class CategoryBytes {
 public:
  void add(MemoryCategory c, std::uint64_t bytes) noexcept;
  void subtract(MemoryCategory c, std::uint64_t bytes) noexcept;  // saturating, creates the key
  bool has(MemoryCategory c) const noexcept { return (present_ >> index(c)) & 1u; }
  std::uint64_t get(MemoryCategory c) const noexcept { return bytes_[index(c)]; }
  bool empty() const noexcept { return present_ == 0; }
  // The present categories in JSON key order (alphabetical: activation, gradient, optimizer,
  // other, parameter).
  std::vector<MemoryCategory> keys() const;
  // f(category, bytes) for each present category, in the same order, allocating nothing.
  template <typename F>
  void for_each(F&& f) const {
    for (MemoryCategory c : kKeyOrder)
      if (has(c)) f(c, get(c));
  }
  bool operator==(const CategoryBytes&) const = default;

 private:
  // The wire names' alphabetical order (serde's BTreeMap order in the original).
  static constexpr std::array<MemoryCategory, 5> kKeyOrder = {
      MemoryCategory::activation, MemoryCategory::gradient, MemoryCategory::optimizer,
      MemoryCategory::other, MemoryCategory::parameter};
  static unsigned index(MemoryCategory c) noexcept { return static_cast<unsigned>(c); }
  std::array<std::uint64_t, 5> bytes_{};
  std::uint8_t present_ = 0;
};

struct MemorySummary {
  std::uint64_t alloc_count = 0;
  std::uint64_t free_count = 0;
  std::uint64_t total_alloc_bytes = 0;
  std::uint64_t peak_bytes = 0;
  std::uint64_t peak_timestamp_ns = 0;
  std::string_view peak_device;  // empty when there is no memory event
  // The span of the allocation that set the peak (not written to JSON: the report names it).
  std::string_view peak_span_id;
  CategoryBytes peak_by_category;
  std::uint64_t autograd_retained_bytes = 0;
};

struct MemoryTimelinePoint {
  std::uint64_t timestamp_ns = 0;
  std::string_view device;
  std::uint64_t live_bytes = 0;  // also written as heap_bytes
  std::uint64_t free_bytes = 0;  // capacity − live when the capacity is known, else 0
  CategoryBytes by_category;
};

struct LiveAllocation {
  std::string_view tensor_id;
  std::string_view span_id;
  std::optional<std::string_view> op_name;  // written as null when absent
  std::uint64_t bytes = 0;
  std::span<const std::uint64_t> shape;
  std::string_view dtype;
  std::string_view device;
  MemoryCategory category = MemoryCategory::other;
};

struct DeviceMemoryStats {
  std::string_view device;
  std::uint64_t capacity_bytes = 0;
  std::uint64_t peak_bytes = 0;
  std::uint64_t peak_timestamp_ns = 0;
  std::uint64_t alloc_count = 0;
  std::uint64_t free_count = 0;
};

struct MemoryProfile {
  MemorySummary summary;
  std::vector<MemoryTimelinePoint> timeline;   // one point per memory event, in sorted order
  std::vector<LiveAllocation> peak_breakdown;  // live at the global peak, bytes desc, tensor_id
  std::vector<DeviceMemoryStats> by_device;    // sorted by device name
};

// trace6.md §7.1. Only `doc.memory` drives lifetimes; n·log n (one sort of the events). Without
// `timeline` the timeline stays empty (everything else is the same): callers that only read
// the summary skip ~88 bytes per memory event.
MemoryProfile analyze_memory(const TraceDocument& doc, bool timeline = true);
// The same without storing the timeline: each point is handed to `sink` in replay order (the
// Chrome export streams them as counter samples, with no memory per event). The peak breakdown
// stays empty (it needs memory per event); everything else is the same.
using MemoryPointSink = void (*)(const MemoryTimelinePoint& point, void* user);
MemoryProfile analyze_memory(const TraceDocument& doc, MemoryPointSink sink, void* user);
// analyze_memory(doc).summary, replayed without the timeline or the peak breakdown (which costs
// memory per event and a sort of the live allocations): for callers that compare peaks.
MemorySummary memory_summary(const TraceDocument& doc);

}  // namespace candle_graph
