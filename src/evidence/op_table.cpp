#include "evidence/op_table.hpp"
#include "events/saturating.hpp"

#include <algorithm>
#include <map>

namespace candle_graph::evidence {
namespace {}  // namespace

std::vector<std::uint32_t> merged_into_parent(const ExecutionGraph& g) {
  const TraceDocument& doc = *g.doc;
  const std::size_t n_spans = doc.spans().size();
  const std::size_t n_ops = doc.ops().size();
  // Direct children per op, to find single children of the same name.
  std::vector<std::uint32_t> children(n_ops, 0), only_child(n_ops, kNoIndex);
  for (std::uint32_t k = 0; k < n_ops; ++k) {
    const std::uint32_t p = g.nodes[n_spans + k].parent_op;
    if (p == kNoIndex) continue;
    const auto parent = static_cast<std::uint32_t>(p - n_spans);
    ++children[parent];
    only_child[parent] = k;
  }
  std::vector<std::uint32_t> merged(n_ops, kNoIndex);
  for (std::uint32_t k = 0; k < n_ops; ++k) {
    const std::uint32_t c = only_child[k];
    if (children[k] == 1 && doc.ops()[c].op_name == doc.ops()[k].op_name) merged[c] = k;
  }
  return merged;
}

OpTable op_table(const ExecutionGraph& g, const device::DeviceTime& device) {
  const TraceDocument& doc = *g.doc;
  const std::size_t n_spans = doc.spans().size();
  const std::size_t n_ops = doc.ops().size();
  std::vector<char> in_region(n_spans, 0);
  for (std::uint32_t s : measured_subtree(doc)) in_region[s] = 1;

  const std::vector<std::uint32_t> merged_into = merged_into_parent(g);
  auto representative = [&](std::uint32_t k) {
    while (merged_into[k] != kNoIndex) k = merged_into[k];
    return k;
  };

  std::map<std::string_view, OpRow> rows;
  for (std::uint32_t k = 0; k < n_ops; ++k) {
    const GraphNode& node = g.nodes[n_spans + k];
    if (node.span == kNoIndex || !in_region[node.span]) continue;
    const std::uint32_t r = representative(k);
    OpRow& row = rows[doc.ops()[r].op_name];
    row.name = doc.ops()[r].op_name;
    if (r == k) {
      ++row.calls;
      row.host_total_ns = sat_add(row.host_total_ns, node.total_time_ns);
      row.device_total_ns = sat_add(row.device_total_ns, device.op_total_ns[k]);
    }
    row.host_self_ns = sat_add(row.host_self_ns, node.self_time_ns);
    row.device_self_ns = sat_add(row.device_self_ns, device.op_self_ns[k]);
  }
  OpTable t;
  t.rows.reserve(rows.size());
  for (auto& [name, row] : rows) t.rows.push_back(row);
  std::stable_sort(t.rows.begin(), t.rows.end(), [](const OpRow& a, const OpRow& b) {
    return a.host_self_ns > b.host_self_ns;  // the map's order (name) breaks ties
  });
  t.unattributed_device_ns = device.unattributed_ns;
  t.device_ns = device.device_ns;
  return t;
}

}  // namespace candle_graph::evidence
