#include "device/device_time.hpp"
#include "events/saturating.hpp"

#include <unordered_map>

namespace candle_graph::device {
namespace {

// Spans with every child after its parent (cycle-safe: a span is placed once).
std::vector<std::uint32_t> parents_first(const TraceDocument& doc) {
  const std::size_t n = doc.spans().size();
  std::vector<std::vector<std::uint32_t>> children(n);
  std::vector<std::uint32_t> order;
  order.reserve(n);
  for (std::uint32_t s = 0; s < n; ++s) {
    const std::uint32_t p = doc.span_parent()[s];
    if (p != kNoIndex && p != s) children[p].push_back(s);
  }
  std::vector<char> placed(n, 0);
  std::vector<std::uint32_t> todo;
  for (std::uint32_t root = 0; root < n; ++root) {
    if (doc.span_parent()[root] != kNoIndex) continue;
    todo.push_back(root);
    while (!todo.empty()) {
      const std::uint32_t s = todo.back();
      todo.pop_back();
      if (placed[s]) continue;
      placed[s] = 1;
      order.push_back(s);
      for (std::uint32_t c : children[s]) todo.push_back(c);
    }
  }
  return order;
}

}  // namespace

DeviceTime attribute_device_time(const TraceDocument& doc,
                                 std::span<const std::uint32_t> op_parent) {
  const std::vector<OpEvent>& ops = doc.ops();
  const std::vector<OpEvent>& work = doc.device_ops();
  DeviceTime t;
  t.launch_call.assign(work.size(), kNoIndex);
  t.launcher.assign(work.size(), kNoIndex);
  t.op_self_ns.assign(ops.size(), 0);
  t.op_total_ns.assign(ops.size(), 0);
  t.span_self_ns.assign(doc.spans().size(), 0);
  t.span_total_ns.assign(doc.spans().size(), 0);

  std::unordered_map<std::uint64_t, std::uint32_t> call_of;  // correlation -> runtime call
  call_of.reserve(work.size());
  for (std::uint32_t i = 0; i < ops.size(); ++i)
    if (ops[i].op_kind == OpKind::runtime && ops[i].correlation)
      call_of.try_emplace(*ops[i].correlation, i);

  for (std::uint32_t k = 0; k < work.size(); ++k) {
    const std::uint64_t ns = device_duration(work[k]);
    if (work[k].op_kind == OpKind::sync) {  // a wait, not work: no op's device time
      t.sync_ns = sat_add(t.sync_ns, ns);
      continue;
    }
    t.device_ns = sat_add(t.device_ns, ns);
    if (doc.device_op_span()[k] != kNoIndex)
      t.span_self_ns[doc.device_op_span()[k]] =
          sat_add(t.span_self_ns[doc.device_op_span()[k]], ns);
    const auto call = work[k].correlation ? call_of.find(*work[k].correlation) : call_of.end();
    if (call == call_of.end()) {
      ++t.without_launch_record;
    } else {
      t.launch_call[k] = call->second;
      // The innermost enclosing op that is not itself a runtime call.
      std::uint32_t op = op_parent[call->second];
      while (op != kNoIndex && ops[op].op_kind == OpKind::runtime) op = op_parent[op];
      t.launcher[k] = op;
    }
    if (t.launcher[k] == kNoIndex) {
      t.unattributed_ns = sat_add(t.unattributed_ns, ns);
      ++t.unattributed_ops;
    } else {
      t.op_self_ns[t.launcher[k]] = sat_add(t.op_self_ns[t.launcher[k]], ns);
    }
  }

  t.op_total_ns = t.op_self_ns;
  t.span_total_ns = t.span_self_ns;
  // Without device work (a CPU-only trace) every self time is 0, and so is every total: the
  // nesting walks below would only add zeros.
  if (work.empty()) return t;

  // An op's total: its own work and that of every op it encloses, through the nesting (children
  // are added to their parents deepest first: ops sorted by depth, descending).
  constexpr std::uint32_t kUnknown = kNoIndex;
  std::vector<std::uint32_t> depth(ops.size(), kUnknown);
  std::vector<std::uint32_t> chain;
  for (std::uint32_t i = 0; i < ops.size(); ++i) {
    std::uint32_t p = i;
    while (p != kNoIndex && depth[p] == kUnknown) {  // each op is walked once
      chain.push_back(p);
      p = op_parent[p];
    }
    std::uint32_t d = p == kNoIndex ? 0 : depth[p] + 1;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) depth[*it] = d++;
    chain.clear();
  }
  std::vector<std::vector<std::uint32_t>> by_depth;
  for (std::uint32_t i = 0; i < ops.size(); ++i) {
    if (depth[i] >= by_depth.size()) by_depth.resize(depth[i] + 1);
    by_depth[depth[i]].push_back(i);
  }
  for (auto level = by_depth.rbegin(); level != by_depth.rend(); ++level)
    for (std::uint32_t i : *level)
      if (op_parent[i] != kNoIndex)
        t.op_total_ns[op_parent[i]] = sat_add(t.op_total_ns[op_parent[i]], t.op_total_ns[i]);

  const std::vector<std::uint32_t> order = parents_first(doc);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const std::uint32_t p = doc.span_parent()[*it];
    if (p != kNoIndex && p != *it)
      t.span_total_ns[p] = sat_add(t.span_total_ns[p], t.span_total_ns[*it]);
  }
  return t;
}

}  // namespace candle_graph::device
