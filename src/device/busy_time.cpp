#include "device/busy_time.hpp"

#include <algorithm>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include "device/device_time.hpp"
#include "device/intervals.hpp"

namespace candle_graph::device {

std::uint64_t busy_ns(const TraceDocument& doc) {
  std::map<std::string_view, std::vector<Interval>> by_device;
  for (const OpEvent& op : doc.device_ops()) {
    if (op.op_kind == OpKind::sync) continue;
    const std::uint64_t end = op.timestamp_ns + device_duration(op);
    by_device[op.device].emplace_back(op.timestamp_ns, end < op.timestamp_ns ? UINT64_MAX : end);
  }
  std::uint64_t busy = 0;
  for (auto& [device, intervals] : by_device) {
    const std::uint64_t b = length(merged(std::move(intervals)));
    busy = busy + b < busy ? UINT64_MAX : busy + b;
  }
  return busy;
}

}  // namespace candle_graph::device
