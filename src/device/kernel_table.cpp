#include "device/kernel_table.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>

#include "device/device_time.hpp"

namespace candle_graph::device {

std::string demangled(std::string_view raw) {
  if (raw.size() < 3 || raw.substr(0, 2) != "_Z") return std::string(raw);
  const std::string name(raw);
  int status = 0;
  const std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && out ? std::string(out.get()) : name;
}

std::vector<KernelRow> kernel_table(const TraceDocument& doc) {
  std::map<std::pair<std::string_view, std::string_view>, KernelRow> rows;
  for (const OpEvent& op : doc.device_ops()) {
    if (op.op_kind == OpKind::sync) continue;  // waits, not work (device_time.hpp)
    KernelRow& r = rows[{op.op_name, op.device}];
    const std::uint64_t ns = device_duration(op);
    if (r.calls == 0) {
      r.raw_name = op.op_name;
      r.device = op.device;
      r.kind = op.op_kind;
      r.min_ns = ns;
    }
    ++r.calls;
    r.total_ns = r.total_ns + ns < r.total_ns ? UINT64_MAX : r.total_ns + ns;
    r.min_ns = std::min(r.min_ns, ns);
    r.max_ns = std::max(r.max_ns, ns);
  }
  std::vector<KernelRow> out;
  out.reserve(rows.size());
  for (auto& [key, row] : rows) {
    row.name = demangled(row.raw_name);
    out.push_back(std::move(row));
  }
  std::stable_sort(out.begin(), out.end(), [](const KernelRow& a, const KernelRow& b) {
    return a.total_ns > b.total_ns;  // the map's order (raw name, device) breaks ties
  });
  return out;
}

}  // namespace candle_graph::device
