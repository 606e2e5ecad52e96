// trace6.md §7.1 analyze_memory: replay the explicit alloc/free events in time order and record the
// live bytes per device, the timeline, the global peak and what was live at that peak.
#include <algorithm>
#include <unordered_map>

#include "candle_graph/memory.hpp"
#include "memory/backward_spans.hpp"
#include "memory/memory_order.hpp"
#include "trace/huge_pages.hpp"
#include "trace/live_key_table.hpp"

namespace candle_graph {
namespace {

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) noexcept {
  return a + b < a ? UINT64_MAX : a + b;
}

struct DeviceState {
  std::string_view device;
  std::uint64_t capacity = 0;
  bool capacity_known = false;
  std::uint64_t live = 0;
  CategoryBytes by_category;
  std::uint64_t peak = 0;
  std::uint64_t peak_ts = 0;
  std::uint64_t allocs = 0;
  std::uint64_t frees = 0;
};

// What a free needs of the live allocation it releases, kept in the table's slot so that the
// free does not read the (long evicted) alloc event: 12 bytes, 4-byte aligned, so a slot is 32.
struct AllocValue {
  std::uint32_t category = 0;
  std::uint32_t bytes_lo = 0, bytes_hi = 0;
  static AllocValue of(const MemoryEvent& e) noexcept {
    return {static_cast<std::uint32_t>(e.category), static_cast<std::uint32_t>(e.bytes),
            static_cast<std::uint32_t>(e.bytes >> 32)};
  }
  std::uint64_t bytes() const noexcept { return std::uint64_t{bytes_hi} << 32 | bytes_lo; }
  MemoryCategory memory_category() const noexcept { return static_cast<MemoryCategory>(category); }
};

LiveAllocation to_allocation(const MemoryEvent& e) {
  return {e.tensor_id, e.span_id, e.op_name, e.bytes, e.shape, e.dtype, e.device, e.category};
}

}  // namespace

namespace {

// `breakdown`: whether to list the allocations live at the peak (memory per event, and a sort).
MemoryProfile replay_memory(const TraceDocument& doc, bool timeline, bool breakdown,
                            MemoryPointSink sink, void* user) {
  doc.check_indexed();
  MemoryProfile profile;
  const auto& events = doc.memory();
  if (events.empty()) return profile;  // no lifetimes are invented from ops or tensors

  std::vector<DeviceState> devices;
  std::unordered_map<std::string_view, std::uint32_t> device_index;
  std::uint32_t last = kNoIndex;  // consecutive events nearly always name the same device
  auto device_of = [&](std::string_view name) -> DeviceState& {
    if (last != kNoIndex && devices[last].device == name) return devices[last];
    auto [it, inserted] = device_index.emplace(name, static_cast<std::uint32_t>(devices.size()));
    if (inserted) {
      devices.emplace_back();
      devices.back().device = name;
    }
    last = it->second;
    return devices[last];
  };
  // trace6.md §7.1 step 4, applied before the replay (fix: the original filled it after, so
  // free_bytes was always 0). Capacity = max(used + free) over the device's samples.
  for (const DeviceMemoryEvent& s : doc.device_memory()) {
    DeviceState& d = device_of(s.device);
    d.capacity = std::max(d.capacity, saturating_add(s.used_bytes, s.free_bytes));
    d.capacity_known = true;
  }

  const std::vector<std::uint8_t> in_backward = memory::backward_subtree_flags(doc);
  const auto& memory_span = doc.memory_span();
  const std::vector<std::uint32_t> order = memory::sorted_order(events);
  // Live allocations keyed by tensor_id only (trace6.md §7.1 step 2).
  detail::LiveKeyTable<AllocValue> live;
  auto same_id = [&](std::uint32_t a, std::uint32_t b) {
    return events[a].tensor_id == events[b].tensor_id;
  };
  // (alloc event, position in `order` where it left the live set: freed or replaced), in
  // position order: the live set at the peak is read off this list after the replay instead of
  // replaying a second time up to the peak.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ended;
  if (breakdown) reserve_in_huge_pages(ended, events.size() / 2 + 1);  // one per free
  std::size_t live_at_peak = 0;
  detail::KeysAhead keys(
      order.size(), [&](std::size_t p) { return detail::LiveKey::of(events[order[p]].tensor_id); },
      live);

  MemorySummary& sum = profile.summary;
  std::size_t peak_position = 0;  // position in `order` of the event that set the global peak
  bool have_peak = false;
  bool retention_recorded = false;
  if (timeline) reserve_in_huge_pages(profile.timeline, events.size());
  for (std::size_t pos = 0; pos < order.size(); ++pos) {
    const std::uint32_t k = order[pos];
    const MemoryEvent& e = events[k];
    DeviceState& d = device_of(e.device);
    const auto position = static_cast<std::uint32_t>(pos);
    const detail::LiveKey key = keys.next(pos, live);
    if (e.action == MemoryAction::alloc) {
      ++sum.alloc_count;
      ++d.allocs;
      sum.total_alloc_bytes = saturating_add(sum.total_alloc_bytes, e.bytes);
      d.live = saturating_add(d.live, e.bytes);
      d.by_category.add(e.category, e.bytes);
      const auto replaced = live.put(k, key, AllocValue::of(e), same_id);
      if (breakdown && replaced.event != kNoIndex) ended.emplace_back(replaced.event, position);
    } else {
      ++sum.free_count;
      ++d.frees;
      const auto alloc = live.take(key, k, same_id);
      if (alloc.event != kNoIndex) {
        // trace6.md §17.10: the bytes and category of the live allocation are released, whatever
        // the free event says.
        const std::uint64_t bytes = alloc.value.bytes();
        d.live = d.live > bytes ? d.live - bytes : 0;
        d.by_category.subtract(alloc.value.memory_category(), bytes);
        if (breakdown) ended.emplace_back(alloc.event, position);
      } else {
        d.live = d.live > e.bytes ? d.live - e.bytes : 0;
      }
    }
    const std::uint64_t free_bytes =
        d.capacity_known && d.capacity > d.live ? d.capacity - d.live : 0;
    if (timeline)
      profile.timeline.push_back({e.timestamp_ns, e.device, d.live, free_bytes, d.by_category});
    if (sink != nullptr)
      sink(MemoryTimelinePoint{e.timestamp_ns, e.device, d.live, free_bytes, d.by_category}, user);
    if (d.live > d.peak) {
      d.peak = d.live;
      d.peak_ts = e.timestamp_ns;
    }
    if (d.live > sum.peak_bytes) {
      sum.peak_bytes = d.live;
      sum.peak_timestamp_ns = e.timestamp_ns;
      sum.peak_device = e.device;
      sum.peak_span_id = e.span_id;
      sum.peak_by_category = d.by_category;
      peak_position = pos;  // the breakdown is rebuilt once at the end, not copied per peak
      live_at_peak = live.size();
      have_peak = true;
    }
    // Fix of trace6.md §7.1: the first event anywhere inside the backward subtree (see
    // backward_spans).
    const std::uint32_t span = memory_span[k];
    if (!retention_recorded && span != kNoIndex && in_backward[span]) {
      sum.autograd_retained_bytes = d.by_category.has(MemoryCategory::activation)
                                        ? d.by_category.get(MemoryCategory::activation)
                                        : 0;
      retention_recorded = true;
    }
  }

  // The live set's table goes before the breakdown is built: both at once were the peak memory
  // of `import` (the table is twice the live set at 32 bytes a slot).
  live.release();
  if (have_peak && breakdown) {
    // Live at the peak: allocated at or before it and not freed or replaced by then.
    std::vector<std::uint8_t> gone(events.size(), 0);
    for (const auto& [alloc, position] : ended) {
      if (position > peak_position) break;
      gone[alloc] = 1;
    }
    profile.peak_breakdown.reserve(live_at_peak);
    for (std::size_t pos = 0; pos <= peak_position; ++pos) {
      const std::uint32_t k = order[pos];
      if (events[k].action == MemoryAction::alloc && !gone[k])
        profile.peak_breakdown.push_back(to_allocation(events[k]));
    }
    std::sort(profile.peak_breakdown.begin(), profile.peak_breakdown.end(),
              [](const LiveAllocation& a, const LiveAllocation& b) {
                if (a.bytes != b.bytes) return a.bytes > b.bytes;
                return a.tensor_id < b.tensor_id;
              });
  }

  // trace6.md §7.1 step 5: only devices that had memory events, sorted by name.
  for (const DeviceState& d : devices) {
    if (d.allocs + d.frees == 0) continue;
    profile.by_device.push_back({d.device, d.capacity, d.peak, d.peak_ts, d.allocs, d.frees});
  }
  std::sort(
      profile.by_device.begin(), profile.by_device.end(),
      [](const DeviceMemoryStats& a, const DeviceMemoryStats& b) { return a.device < b.device; });
  return profile;
}

}  // namespace

MemoryProfile analyze_memory(const TraceDocument& doc, bool timeline) {
  return replay_memory(doc, timeline, true, nullptr, nullptr);
}

MemorySummary memory_summary(const TraceDocument& doc) {
  return replay_memory(doc, false, false, nullptr, nullptr).summary;
}

MemoryProfile analyze_memory(const TraceDocument& doc, MemoryPointSink sink, void* user) {
  return replay_memory(doc, false, false, sink, user);
}

}  // namespace candle_graph
