#include "memory/memory_json.hpp"

#include "output/parallel_elements.hpp"

namespace candle_graph::memory {

using output::JsonStream;
using output::KeyOrder;
using output::write_object;

void write_shape(JsonStream& w, std::span<const std::uint64_t> shape) {
  w.begin_array();
  for (std::uint64_t d : shape) w.u64(d);
  w.end_array();
}

void write_category_bytes(JsonStream& w, const CategoryBytes& c) {
  // Alphabetical order of the wire names (serde's BTreeMap order); no vector of keys per point.
  static constexpr MemoryCategory kSorted[] = {MemoryCategory::activation, MemoryCategory::gradient,
                                               MemoryCategory::optimizer, MemoryCategory::other,
                                               MemoryCategory::parameter};
  w.begin_object();
  if (!c.empty())
    for (MemoryCategory k : kSorted)
      if (c.has(k)) w.schema_key(to_string(k)).u64(c.get(k));
  w.end_object();
}

void write_memory_summary(JsonStream& w, const MemorySummary& s, KeyOrder order) {
  static constexpr std::array<std::string_view, 8> kKeys{
      "alloc_count",       "free_count",  "total_alloc_bytes", "peak_bytes",
      "peak_timestamp_ns", "peak_device", "peak_by_category",  "autograd_retained_bytes"};
  write_object(w, order, kKeys, [&](std::size_t i, std::string_view k) {
    w.schema_key(k);
    switch (i) {
      case 0:
        w.u64(s.alloc_count);
        break;
      case 1:
        w.u64(s.free_count);
        break;
      case 2:
        w.u64(s.total_alloc_bytes);
        break;
      case 3:
        w.u64(s.peak_bytes);
        break;
      case 4:
        w.u64(s.peak_timestamp_ns);
        break;
      case 5:
        w.string(s.peak_device);
        break;
      case 6:
        write_category_bytes(w, s.peak_by_category);
        break;
      default:
        w.u64(s.autograd_retained_bytes);
        break;
    }
  });
}

void write_timeline(JsonStream& w, const std::vector<MemoryTimelinePoint>& timeline,
                    KeyOrder order) {
  static constexpr std::array<std::string_view, 6> kKeys{
      "timestamp_ns", "device", "live_bytes", "heap_bytes", "free_bytes", "by_category"};
  w.begin_array();
  output::write_elements(w, timeline.size(), [&](JsonStream& out, std::size_t n) {
    const MemoryTimelinePoint& p = timeline[n];
    write_object(out, order, kKeys, [&](std::size_t i, std::string_view k) {
      out.schema_key(k);
      switch (i) {
        case 0:
          out.u64(p.timestamp_ns);
          break;
        case 1:
          out.string(p.device);
          break;
        case 2:
          out.u64(p.live_bytes);
          break;
        case 3:
          out.u64(p.live_bytes);
          break;  // heap_bytes: the same value in graph/3
        case 4:
          out.u64(p.free_bytes);
          break;
        default:
          write_category_bytes(out, p.by_category);
          break;
      }
    });
  });
  w.end_array();
}

void write_peak_breakdown(JsonStream& w, const std::vector<LiveAllocation>& live, KeyOrder order) {
  static constexpr std::array<std::string_view, 8> kKeys{
      "tensor_id", "span_id", "op_name", "bytes", "shape", "dtype", "device", "category"};
  w.begin_array();
  for (const LiveAllocation& a : live) {
    write_object(w, order, kKeys, [&](std::size_t i, std::string_view k) {
      w.schema_key(k);
      switch (i) {
        case 0:
          w.string(a.tensor_id);
          break;
        case 1:
          w.string(a.span_id);
          break;
        case 2:
          a.op_name ? w.string(*a.op_name) : w.null();
          break;  // null, not omitted
        case 3:
          w.u64(a.bytes);
          break;
        case 4:
          write_shape(w, a.shape);
          break;
        case 5:
          w.string(a.dtype);
          break;
        case 6:
          w.string(a.device);
          break;
        default:
          w.string(to_string(a.category));
          break;
      }
    });
  }
  w.end_array();
}

void write_by_device(JsonStream& w, const std::vector<DeviceMemoryStats>& devices, KeyOrder order) {
  static constexpr std::array<std::string_view, 6> kKeys{
      "device", "capacity_bytes", "peak_bytes", "peak_timestamp_ns", "alloc_count", "free_count"};
  w.begin_array();
  for (const DeviceMemoryStats& d : devices) {
    write_object(w, order, kKeys, [&](std::size_t i, std::string_view k) {
      w.schema_key(k);
      switch (i) {
        case 0:
          w.string(d.device);
          break;
        case 1:
          w.u64(d.capacity_bytes);
          break;
        case 2:
          w.u64(d.peak_bytes);
          break;
        case 3:
          w.u64(d.peak_timestamp_ns);
          break;
        case 4:
          w.u64(d.alloc_count);
          break;
        default:
          w.u64(d.free_count);
          break;
      }
    });
  }
  w.end_array();
}

void write_memory_profile(JsonStream& w, const MemoryProfile& p, KeyOrder order) {
  static constexpr std::array<std::string_view, 4> kKeys{"summary", "timeline", "peak_breakdown",
                                                         "by_device"};
  write_object(w, order, kKeys, [&](std::size_t i, std::string_view k) {
    w.schema_key(k);
    switch (i) {
      case 0:
        write_memory_summary(w, p.summary, order);
        break;
      case 1:
        write_timeline(w, p.timeline, order);
        break;
      case 2:
        write_peak_breakdown(w, p.peak_breakdown, order);
        break;
      default:
        write_by_device(w, p.by_device, order);
        break;
    }
  });
}

}  // namespace candle_graph::memory
