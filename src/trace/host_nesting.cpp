#include "trace/host_nesting.hpp"

#include <algorithm>
#include <numeric>

#include "trace/huge_pages.hpp"

namespace candle_graph {

HostNesting nest_intervals(const std::vector<std::uint64_t>& lanes,
                           const std::vector<std::uint64_t>& starts,
                           const std::vector<std::uint64_t>& totals) {
  const std::size_t n = starts.size();
  HostNesting h;
  assign_in_huge_pages(h.parent, n, kNoIndex);
  for (std::vector<std::uint64_t>* times : {&h.total_ns, &h.self_ns}) {
    reserve_in_huge_pages(*times, n);
    times->assign(totals.begin(), totals.end());
  }
  auto end_of = [&](std::uint32_t i) {
    const std::uint64_t e = starts[i] + totals[i];
    return e < starts[i] ? UINT64_MAX : e;
  };
  std::vector<std::uint32_t> order;
  assign_in_huge_pages(order, n, 0u);
  std::iota(order.begin(), order.end(), 0u);
  const auto before = [&](std::uint32_t a, std::uint32_t b) {
    if (lanes[a] != lanes[b]) return lanes[a] < lanes[b];
    if (starts[a] != starts[b]) return starts[a] < starts[b];
    if (totals[a] != totals[b]) return totals[a] > totals[b];
    return a < b;
  };
  // Ops of one thread written as they start are already in this order: one sequential check
  // instead of a sort whose comparisons read the three arrays at random.
  if (!std::is_sorted(order.begin(), order.end(), before))
    std::sort(order.begin(), order.end(), before);
  std::vector<std::uint32_t> stack;
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint32_t i = order[k];
    if (k > 0 && lanes[order[k - 1]] != lanes[i]) stack.clear();
    const std::uint64_t start = starts[i], end = end_of(i);
    bool partial = false;
    // Pop while the op starts at or after the top's end, or ends after it.
    while (!stack.empty()) {
      const std::uint64_t top_end = end_of(stack.back());
      if (start < top_end && end <= top_end) break;
      partial |= start < top_end;  // inside it at its start, past it at its end
      stack.pop_back();
    }
    h.partial_overlaps += partial ? 1 : 0;
    if (!stack.empty()) {
      const std::uint32_t p = stack.back();
      h.parent[i] = p;
      h.self_ns[p] = h.self_ns[p] > totals[i] ? h.self_ns[p] - totals[i] : 0;
    }
    stack.push_back(i);
  }
  return h;
}

HostNesting nest_host_ops(const TraceDocument& doc) {
  const std::vector<OpEvent>& ops = doc.ops();
  std::vector<std::uint64_t> lanes, starts, totals;
  for (auto* v : {&lanes, &starts, &totals}) assign_in_huge_pages(*v, ops.size(), std::uint64_t{0});
  for (std::size_t i = 0; i < ops.size(); ++i) {
    lanes[i] = ops[i].lane.value_or(0);
    starts[i] = ops[i].timestamp_ns;
    totals[i] = ops[i].total_ns.value_or(ops[i].duration_ns);
  }
  return nest_intervals(lanes, starts, totals);
}

}  // namespace candle_graph
