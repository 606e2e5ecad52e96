#include "import/pytorch/op_placement.hpp"

#include <algorithm>

namespace candle_graph::import::pytorch {

using trace_event::Slice;

PlacedOps place_ops(const Model& m, const EventLists& lists, const Region& region,
                    const SpanPlan& plan, RepairCounts& repairs) {
  const std::int64_t r0 = region.begin, r1 = region.end;
  PlacedOps placed;
  std::vector<PlacedOp>& ops = placed.ops;
  ops.reserve(lists.cpu_ops.size() + lists.runtime_calls.size() + lists.device_ops.size());
  for (const auto* host : {&lists.cpu_ops, &lists.runtime_calls}) {
    for (std::uint32_t i : *host) {
      const Slice& s = m.slices[i];
      if (s.ts_ns < r0 || s.ts_ns > r1) {
        ++repairs[host == &lists.cpu_ops ? "convert.dropped_ops_outside_window"
                                         : "convert.dropped_runtime_calls_outside_window"];
        continue;
      }
      ops.push_back({s.ts_ns, s.ts_ns, i, 0});
    }
  }
  for (std::uint32_t i : lists.device_ops) {
    const Slice& s = m.slices[i];
    std::int64_t launch = s.ts_ns;
    const auto it = s.correlation >= 0 ? m.launch_ns.find(s.correlation) : m.launch_ns.end();
    if (it != m.launch_ns.end()) {
      launch = it->second;
    } else {
      ++repairs["convert.device_ops_without_launch_record"];
    }
    if (launch < r0 || launch > r1) {
      ++repairs["convert.dropped_device_ops_outside_window"];
      continue;
    }
    if (s.device >= 0 && (placed.first_device < 0 || s.device < placed.first_device))
      placed.first_device = s.device;
    ops.push_back({s.ts_ns, launch, i, 0});
  }
  // Ties keep the file's order (the slice index): two host events with one start and one end
  // nest in the order Kineto wrote them, parent first, as PyTorch's stable sort reads them.
  std::sort(ops.begin(), ops.end(), [](const PlacedOp& a, const PlacedOp& b) {
    return a.key != b.key ? a.key < b.key : a.slice < b.slice;
  });
  SpanLocator locate(plan);
  for (PlacedOp& o : ops) o.span = locate.at(o.key);
  std::stable_sort(ops.begin(), ops.end(),
                   [](const PlacedOp& a, const PlacedOp& b) { return a.ts < b.ts; });
  return placed;
}

PlacedMemory place_memory(Model& m, const Region& region, const SpanPlan& plan,
                          RepairCounts& repairs) {
  PlacedMemory placed;
  placed.events = pair_memory(m.memory, region.begin, region.end, repairs);
  placed.span.resize(placed.events.size());
  SpanLocator locate(plan);
  for (std::size_t i = 0; i < placed.events.size(); ++i)
    placed.span[i] = locate.at(placed.events[i].ts_ns);
  return placed;
}

std::vector<std::optional<ExecutionStep>> inherited_steps(const SpanPlan& plan) {
  const std::vector<Draft>& drafts = plan.drafts;
  std::vector<std::optional<ExecutionStep>> inherited(drafts.size());
  for (std::uint32_t s : plan.pre) {
    inherited[s] = drafts[s].step              ? drafts[s].step
                   : drafts[s].parent != kNone ? inherited[drafts[s].parent]
                                               : std::nullopt;
  }
  return inherited;
}

}  // namespace candle_graph::import::pytorch
