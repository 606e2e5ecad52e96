#include "trace/host_nesting.hpp"

#include <algorithm>
#include <numeric>

#include "trace/huge_pages.hpp"

namespace candle_graph {

namespace {

// The nesting rule itself: ops in (lane, start, longer first, index) order with a stack of the
// ops enclosing the current one on its lane; `nest(parent, child)` is called for every op that
// an op encloses. Returns the partial overlaps (ops that start inside the top op and end after
// it, which nest in nothing there).
template <typename Nest>
std::uint64_t walk_nesting(const std::vector<std::uint64_t>& lanes,
                           const std::vector<std::uint64_t>& starts,
                           const std::vector<std::uint64_t>& totals, Nest&& nest) {
  const std::size_t n = starts.size();
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
  std::uint64_t partial_overlaps = 0;
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
    partial_overlaps += partial ? 1 : 0;
    if (!stack.empty()) nest(stack.back(), i);
    stack.push_back(i);
  }
  return partial_overlaps;
}

// The document's ops as the walk's parallel vectors.
struct OpIntervals {
  std::vector<std::uint64_t> lanes, starts, totals;
  explicit OpIntervals(const std::vector<OpEvent>& ops) {
    for (auto* v : {&lanes, &starts, &totals})
      assign_in_huge_pages(*v, ops.size(), std::uint64_t{0});
    for (std::size_t i = 0; i < ops.size(); ++i) {
      lanes[i] = ops[i].lane.value_or(0);
      starts[i] = ops[i].timestamp_ns;
      totals[i] = ops[i].total_ns.value_or(ops[i].duration_ns);
    }
  }
};

}  // namespace

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
  h.partial_overlaps = walk_nesting(lanes, starts, totals, [&](std::uint32_t p, std::uint32_t i) {
    h.parent[i] = p;
    h.self_ns[p] = h.self_ns[p] > totals[i] ? h.self_ns[p] - totals[i] : 0;
  });
  return h;
}

HostNesting nest_host_ops(const TraceDocument& doc) {
  const OpIntervals ops(doc.ops());
  return nest_intervals(ops.lanes, ops.starts, ops.totals);
}

std::uint64_t count_partial_overlaps(const TraceDocument& doc) {
  const OpIntervals ops(doc.ops());
  return walk_nesting(ops.lanes, ops.starts, ops.totals, [](std::uint32_t, std::uint32_t) {});
}

}  // namespace candle_graph
