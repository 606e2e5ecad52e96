#include "export/chrome_device.hpp"

#include <algorithm>
#include <charconv>
#include <numeric>
#include <string>
#include <tuple>
#include <unordered_map>

#include "device/device_time.hpp"
#include "device/kernel_table.hpp"
#include "export/chrome_events.hpp"
#include "export/chrome_tracks.hpp"
#include "format/chrome.hpp"
#include "trace/host_nesting.hpp"

namespace candle_graph::exporting {
namespace {

namespace fc = format::chrome;

std::uint64_t device_end(const OpEvent& op) noexcept {
  const std::uint64_t end = op.timestamp_ns + device::device_duration(op);
  return end < op.timestamp_ns ? UINT64_MAX : end;
}

// `cuda:10` after `cuda:2`: the number after the last ':' when there is one, then the label.
std::pair<std::uint64_t, std::string_view> device_order_key(std::string_view label) {
  std::uint64_t n = UINT64_MAX;
  const std::size_t colon = label.rfind(':');
  if (colon != std::string_view::npos) {
    const char* first = label.data() + colon + 1;
    const char* last = label.data() + label.size();
    const auto [end, ec] = std::from_chars(first, last, n);
    if (ec != std::errc() || end != last) n = UINT64_MAX;
  }
  return {n, label};
}

std::vector<std::string_view> sorted_devices(const TraceDocument& doc) {
  std::vector<std::string_view> devices;
  for (const OpEvent& op : doc.device_ops()) devices.push_back(op.device);
  std::sort(devices.begin(), devices.end(), [](std::string_view a, std::string_view b) {
    return device_order_key(a) < device_order_key(b);
  });
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  return devices;
}

// The lane group a device op belongs to before overlaps are resolved.
struct GroupKey {
  std::uint32_t device = 0;
  std::optional<std::uint64_t> stream;  // an op without a stream: its own group, first
  bool sync = false;
  auto tie() const { return std::tie(device, stream, sync); }
  bool operator==(const GroupKey& o) const { return tie() == o.tie(); }
};

// Device ops by group, then start, longer first, then document order: the order a lane's slices
// are written in and the order the overlap check needs.
std::vector<std::uint32_t> group_order(const TraceDocument& doc, const std::vector<GroupKey>& key) {
  const std::vector<OpEvent>& ops = doc.device_ops();
  std::vector<std::uint32_t> order(ops.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (!(key[a] == key[b])) return key[a].tie() < key[b].tie();
    if (ops[a].timestamp_ns != ops[b].timestamp_ns)
      return ops[a].timestamp_ns < ops[b].timestamp_ns;
    return device_end(ops[a]) > device_end(ops[b]);
  });
  return order;
}

// Kineto writes -1 (as a 32-bit stream, 4294967295) for work of no stream (a context sync); a
// string tid becomes a lane with bit 62 set (pytorch.md §C4), whose number means nothing.
std::string stream_name(std::optional<std::uint64_t> stream) {
  if (!stream) return "no stream";
  if (*stream == 0xFFFFFFFFu) return "device-wide";
  if (*stream >> 62) return "stream (unnumbered)";
  return "stream " + std::to_string(*stream);
}

std::string lane_name(const DeviceLane& lane) {
  std::string name = stream_name(lane.stream);
  if (lane.sync) name += " sync";
  if (lane.overflow) name += " #" + std::to_string(lane.overflow + 1);
  return name;
}

void write_shape_and_inputs(ChromeJson& w, const OpEvent& o) {
  if (!o.inputs.empty()) {
    w.key("inputs").raw("[");
    for (std::size_t i = 0; i < o.inputs.size(); ++i) {
      if (i) w.raw(",");
      w.str(o.inputs[i]);
    }
    w.raw("]");
  }
  if (o.output) w.key("output").str(*o.output);
  if (!o.shape.empty()) {
    w.key("shape").raw("[");
    for (std::size_t i = 0; i < o.shape.size(); ++i) {
      if (i) w.raw(",");
      w.u64(o.shape[i]);
    }
    w.raw("]");
  }
}

// The args: what a reader wants to see (names, kind, stream, correlation, bytes, the launching
// op) and every trace/6 field of the op, so that the Chrome importer rebuilds it (chrome.md §E7).
void write_device_args(ChromeJson& w, const OpEvent& o, std::string_view demangled,
                       std::string_view launched_by) {
  w.key("args").raw("{");
  w.first_key("span_id").str(o.span_id);
  w.key("op_name").str(o.op_name);
  if (demangled != o.op_name) w.key("demangled").str(demangled);
  w.key("op_kind").str(to_string(o.op_kind));
  w.key("device").str(o.device);
  if (o.lane) w.key("stream").u64(*o.lane);
  if (o.correlation) w.key("correlation").u64(*o.correlation);
  collective_args(w, o);
  if (o.op_kind == OpKind::memcpy || o.op_kind == OpKind::memset)
    w.key("bytes").u64(o.storage_bytes.value_or(0));
  if (!launched_by.empty()) w.key("launched_by").str(launched_by);
  w.key("timestamp_ns").u64(o.timestamp_ns);
  if (o.total_ns) w.key("total_ns").u64(*o.total_ns);
  w.key("duration_ns").u64(o.duration_ns);
  w.key("dtype").str(o.dtype);
  w.key("storage_bytes").u64(o.storage_bytes.value_or(0));
  if (o.input_storage_bytes) w.key("input_storage_bytes").u64(*o.input_storage_bytes);
  write_shape_and_inputs(w, o);
  w.raw("}");
}

// First runtime call per correlation id, in document order: device_time.hpp's rule.
std::unordered_map<std::uint64_t, std::uint32_t> runtime_calls(const TraceDocument& doc) {
  std::unordered_map<std::uint64_t, std::uint32_t> call_of;
  for (std::uint32_t i = 0; i < doc.ops().size(); ++i) {
    const OpEvent& op = doc.ops()[i];
    if (op.op_kind == OpKind::runtime && op.correlation) call_of.try_emplace(*op.correlation, i);
  }
  return call_of;
}

// A time inside the device slice where the flow's end binds: its middle (its start when it has no
// duration), away from the edges it shares with the work before and after it on the stream.
double device_bind_us(const OpEvent& op) {
  const std::uint64_t start = op.timestamp_ns, end = device_end(op);
  return static_cast<double>(start + (end - start) / 2) / 1000.0;
}

void thread_meta(ChromeJson& w, std::uint32_t pid, std::uint32_t tid, std::string_view what,
                 std::string_view arg) {
  begin_event(w, 'M');
  w.key("name").str(what);
  w.key("pid").u64(pid);
  w.key("tid").u64(tid);
  w.key("args").raw("{");
  w.first_key(arg);
}

}  // namespace

DeviceLayout layout_device_lanes(const TraceDocument& doc) {
  DeviceLayout out;
  const std::vector<OpEvent>& ops = doc.device_ops();
  out.devices = sorted_devices(doc);
  std::vector<GroupKey> key(ops.size());
  for (std::uint32_t k = 0; k < ops.size(); ++k) {
    const auto at = std::lower_bound(out.devices.begin(), out.devices.end(), ops[k].device,
                                     [](std::string_view a, std::string_view b) {
                                       return device_order_key(a) < device_order_key(b);
                                     });
    key[k] = {static_cast<std::uint32_t>(at - out.devices.begin()), ops[k].lane,
              ops[k].op_kind == OpKind::sync};
  }
  out.order = group_order(doc, key);
  out.lane_of.assign(ops.size(), 0);
  // Per group, the lanes' last ends: an op goes to the first lane it does not overlap. The groups
  // come in (device, stream, sync) order, so lanes are created sorted and tids count up per pid.
  std::vector<std::uint64_t> lane_end;
  std::size_t group_first_lane = 0;
  std::vector<std::uint32_t> next_tid(out.devices.size(), 1);
  for (std::size_t i = 0; i < out.order.size(); ++i) {
    const std::uint32_t k = out.order[i];
    if (i == 0 || !(key[k] == key[out.order[i - 1]])) {
      group_first_lane = out.lanes.size();
      lane_end.clear();
    }
    std::size_t lane = 0;
    while (lane < lane_end.size() && lane_end[lane] > ops[k].timestamp_ns) ++lane;
    if (lane == lane_end.size()) {
      lane_end.push_back(0);
      const std::uint32_t d = key[k].device;
      out.lanes.push_back({ops[k].device, key[k].stream, key[k].sync,
                           static_cast<std::uint32_t>(lane), fc::kFirstDevicePid + d,
                           next_tid[d]++});
    }
    lane_end[lane] = device_end(ops[k]);
    out.lane_of[k] = static_cast<std::uint32_t>(group_first_lane + lane);
  }
  // Written per lane: overflow lanes after the stream's own, each in time order.
  std::stable_sort(out.order.begin(), out.order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return out.lane_of[a] < out.lane_of[b];
  });
  return out;
}

void write_device_slices(ChromeJson& w, const TraceDocument& doc, const DeviceLayout& layout,
                         DeviceExportStats& stats, ProgressCounter& progress) {
  if (doc.device_ops().empty()) return;
  const device::DeviceTime attribution =
      device::attribute_device_time(doc, nest_host_ops(doc).parent);
  device::DemangledNames names;
  for (const std::uint32_t k : layout.order) {
    const OpEvent& o = doc.device_ops()[k];
    const DeviceLane& lane = layout.lanes[layout.lane_of[k]];
    const std::string& demangled = names(o.op_name);
    const std::uint32_t launcher = attribution.launcher[k];
    double ts = 0, dur = 0;
    to_microseconds(o.timestamp_ns, device_end(o), ts, dur);
    begin_event(w, 'X');
    w.key("cat").str(o.op_kind == OpKind::sync ? fc::kSyncCategory : fc::kDeviceCategory);
    w.key("name").str(demangled);
    where(w, lane.pid, lane.tid, ts);
    w.key("dur").f64(dur);
    write_device_args(w, o, demangled,
                      launcher == kNoIndex ? std::string_view() : doc.ops()[launcher].op_name);
    w.end();
    ++stats.slices;
    if (lane.overflow) ++stats.overflowed;
    progress.add();
  }
}

void write_launch_flows(ChromeJson& w, const TraceDocument& doc, const DeviceLayout& layout,
                        const HostPlacement& host, std::uint64_t& flow_id, DeviceExportStats& stats,
                        ProgressCounter& progress) {
  if (doc.device_ops().empty()) return;
  const auto call_of = runtime_calls(doc);
  for (const std::uint32_t k : layout.order) {
    const OpEvent& o = doc.device_ops()[k];
    progress.add();
    const auto call = o.correlation ? call_of.find(*o.correlation) : call_of.end();
    if (call == call_of.end() || host.op_tid[call->second] == 0) continue;
    const DeviceLane& lane = layout.lanes[layout.lane_of[k]];
    ++flow_id;
    for (int end = 0; end < 2; ++end) {
      begin_event(w, end == 0 ? 's' : 'f');
      if (end == 1) w.key("bp").raw("\"e\"");
      w.key("id").u64(flow_id);
      w.key("cat").str(fc::kLaunchFlowCategory);
      w.key("name").str(fc::kLaunchFlowCategory);
      if (end == 0)
        where(w, 1, host.op_tid[call->second], host.op_bind_us[call->second]);
      else
        where(w, lane.pid, lane.tid, device_bind_us(o));
      w.end();
    }
    ++stats.launch_flows;
  }
}

void write_device_metadata(ChromeJson& w, const DeviceLayout& layout) {
  for (std::uint32_t d = 0; d < layout.devices.size(); ++d) {
    const std::uint32_t pid = fc::kFirstDevicePid + d;
    thread_meta(w, pid, 0, "process_name", "name");
    w.str(layout.devices[d]);
    w.raw("}");
    w.end();
    thread_meta(w, pid, 0, "process_sort_index", "sort_index");
    w.u64(pid);
    w.raw("}");
    w.end();
  }
  for (const DeviceLane& lane : layout.lanes) {
    thread_meta(w, lane.pid, lane.tid, "thread_name", "name");
    w.str(lane_name(lane));
    w.raw("}");
    w.end();
    thread_meta(w, lane.pid, lane.tid, "thread_sort_index", "sort_index");
    w.u64(lane.tid);
    w.raw("}");
    w.end();
  }
}

}  // namespace candle_graph::exporting
