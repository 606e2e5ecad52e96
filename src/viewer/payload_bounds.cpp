#include "viewer/payload_bounds.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <string_view>
#include <tuple>

#include "device/device_time.hpp"

namespace candle_graph::viewer {
namespace {

// Parent node index of every node (kNoIndex for the root): spans through doc.span_parent(), ops
// through their owning span (node i < spans is span i).
std::vector<std::uint32_t> parent_nodes(const ExecutionGraph& g) {
  const auto& parents = g.doc->span_parent();
  std::vector<std::uint32_t> parent(g.nodes.size(), kNoIndex);
  for (std::uint32_t i = 0; i < g.nodes.size(); ++i)
    parent[i] = g.nodes[i].is_op_node() ? g.nodes[i].span : parents[g.nodes[i].span];
  return parent;
}

void keep_top(const ExecutionGraph& g, std::vector<std::uint32_t> ids, std::size_t n,
              std::vector<bool>& kept) {
  const auto by = [&](auto field) {
    const std::size_t k = std::min(n, ids.size());
    std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(k), ids.end(),
                      [&](std::uint32_t a, std::uint32_t b) {
                        const auto fa = field(g.nodes[a]), fb = field(g.nodes[b]);
                        return fa != fb ? fa > fb : a < b;
                      });
    for (std::size_t i = 0; i < k; ++i) kept[ids[i]] = true;
  };
  by([](const GraphNode& x) { return x.self_time_ns; });
  by([](const GraphNode& x) { return x.peak_bytes; });
}

// Depth ≤ 2 (root, measured region, step spans): at most two hops from the parent to a span
// without parent. Hops, not stream order: a trusted trace may start a child before its parent.
// All of them when there are at most `n`; else the roots and the slowest and heaviest `n` of the
// rest: a flat trace of a million spans under one root kept every node (790 MB of HTML).
void keep_top_levels(const ExecutionGraph& g, const std::vector<std::uint32_t>& parent,
                     std::size_t n, std::vector<bool>& kept) {
  std::vector<std::uint32_t> levels;
  for (std::uint32_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].is_op_node()) continue;
    if (parent[i] == kNoIndex) {
      kept[i] = true;  // a root: every other node folds into one
      continue;
    }
    std::uint32_t a = parent[parent[i]];
    if (a != kNoIndex) a = parent[a];
    if (a == kNoIndex) levels.push_back(i);
  }
  if (levels.size() <= n) {
    for (std::uint32_t i : levels) kept[i] = true;
    return;
  }
  keep_top(g, std::move(levels), n, kept);
}

}  // namespace

NodeSelection select_nodes(const ExecutionGraph& g, const PayloadLimits& limits) {
  const std::size_t n = g.nodes.size();
  NodeSelection sel;
  sel.kept.assign(n, n <= limits.full_detail_nodes);
  sel.folded.assign(n, {});
  if (n <= limits.full_detail_nodes) {
    sel.kept_count = n;
    return sel;
  }
  const std::vector<std::uint32_t> parent = parent_nodes(g);
  std::vector<std::uint32_t> spans, ops;
  for (std::uint32_t i = 0; i < n; ++i) (g.nodes[i].is_op_node() ? ops : spans).push_back(i);
  keep_top(g, spans, limits.top_spans, sel.kept);
  keep_top(g, ops, limits.top_ops, sel.kept);
  keep_top_levels(g, parent, limits.top_spans, sel.kept);
  // Close over ancestors (walk stops at the first already-kept ancestor: linear overall).
  std::vector<bool> closed(n, false);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (!sel.kept[i] || closed[i]) continue;
    for (std::uint32_t a = i; a != kNoIndex && !closed[a]; a = parent[a]) {
      closed[a] = true;
      sel.kept[a] = true;
    }
  }
  // Fold every dropped node into its nearest kept ancestor: walk up to the first node whose
  // owner is known and record it along the path (linear overall, whatever the stream order).
  std::vector<std::uint32_t> owner(n, kNoIndex);
  for (std::uint32_t i = 0; i < n; ++i)
    if (sel.kept[i]) owner[i] = i;
  std::vector<std::uint32_t> path;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (sel.kept[i]) {
      ++sel.kept_count;
      continue;
    }
    path.clear();
    std::uint32_t a = i;
    for (; a != kNoIndex && owner[a] == kNoIndex; a = parent[a]) path.push_back(a);
    for (std::uint32_t p : path) owner[p] = a == kNoIndex ? kNoIndex : owner[a];
    if (owner[i] == kNoIndex) continue;
    auto& f = sel.folded[owner[i]];
    if (g.nodes[i].is_op_node()) {
      ++f.ops;
      ++sel.dropped_ops;
    } else {
      ++f.spans;
      ++sel.dropped_spans;
    }
    f.self_time_ns += g.nodes[i].self_time_ns;
  }
  return sel;
}

std::vector<std::uint32_t> select_op_rows(const evidence::OpTable& table, std::size_t limit) {
  const auto& rows = table.rows;
  std::vector<std::uint32_t> ids(rows.size());
  std::iota(ids.begin(), ids.end(), 0u);
  if (rows.size() <= limit) return ids;
  std::vector<bool> kept(rows.size(), false);
  const std::size_t by_device = (limit + 1) / 2;
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(by_device), ids.end(),
                    [&](std::uint32_t a, std::uint32_t b) {
                      const auto da = rows[a].device_self_ns, db = rows[b].device_self_ns;
                      return da != db ? da > db : a < b;
                    });
  for (std::size_t i = 0; i < by_device; ++i) kept[ids[i]] = true;
  // The rows are in host-self order already: fill up to the limit from the top.
  std::size_t count = by_device;
  for (std::size_t i = 0; i < rows.size() && count < limit; ++i)
    if (!kept[i]) {
      kept[i] = true;
      ++count;
    }
  std::vector<std::uint32_t> out;
  out.reserve(limit);
  for (std::uint32_t i = 0; i < rows.size(); ++i)
    if (kept[i]) out.push_back(i);
  return out;
}

std::vector<std::uint32_t> select_device_work(const TraceDocument& doc, std::size_t limit) {
  const auto& work = doc.device_ops();
  std::vector<std::uint32_t> ids(work.size());
  std::iota(ids.begin(), ids.end(), 0u);
  if (ids.size() > limit) {
    std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(limit), ids.end(),
                      [&](std::uint32_t a, std::uint32_t b) {
                        const auto da = device::device_duration(work[a]);
                        const auto db = device::device_duration(work[b]);
                        return da != db ? da > db : a < b;
                      });
    ids.resize(limit);
  }
  // Lane by lane in time order: the viewer reads each lane as one sorted run.
  std::sort(ids.begin(), ids.end(), [&](std::uint32_t a, std::uint32_t b) {
    const OpEvent &x = work[a], &y = work[b];
    return std::tuple(x.device, x.lane.value_or(0), x.timestamp_ns, a) <
           std::tuple(y.device, y.lane.value_or(0), y.timestamp_ns, b);
  });
  return ids;
}

std::vector<std::uint32_t> select_memory_points(const MemoryProfile& memory,
                                                const PayloadLimits& limits) {
  const auto& tl = memory.timeline;
  std::vector<std::uint32_t> keep;
  if (tl.size() <= 2 * limits.memory_buckets) {
    keep.resize(tl.size());
    std::iota(keep.begin(), keep.end(), 0u);
    return keep;
  }
  std::map<std::string_view, std::vector<std::uint32_t>> by_device;
  for (std::uint32_t i = 0; i < tl.size(); ++i) by_device[tl[i].device].push_back(i);
  for (const auto& [device, idx] : by_device) {
    const std::uint64_t t0 = tl[idx.front()].timestamp_ns, t1 = tl[idx.back()].timestamp_ns;
    // The + 1 in double: in u64, t1 − t0 + 1 wraps to 0 for a trace spanning the whole range
    // (then every point fell into one bucket through a NaN/inf cast). Rounding can still put
    // the last point at B, hence the clamp.
    const double width =
        (static_cast<double>(t1 - t0) + 1.0) / static_cast<double>(limits.memory_buckets);
    const auto bucket_of = [&](std::uint32_t j) {
      const auto b =
          static_cast<std::uint64_t>(static_cast<double>(tl[j].timestamp_ns - t0) / width);
      return std::min<std::uint64_t>(b, limits.memory_buckets - 1);
    };
    std::size_t start = 0;
    std::uint32_t peak = idx.front();
    while (start < idx.size()) {
      const std::uint64_t bucket = bucket_of(idx[start]);
      std::uint32_t lo = idx[start], hi = idx[start];
      std::size_t end = start;
      for (; end < idx.size(); ++end) {
        const std::uint32_t j = idx[end];
        if (bucket_of(j) != bucket) break;
        if (tl[j].live_bytes < tl[lo].live_bytes) lo = j;
        if (tl[j].live_bytes > tl[hi].live_bytes) hi = j;
        if (tl[j].live_bytes > tl[peak].live_bytes) peak = j;
      }
      keep.push_back(idx[start]);
      keep.push_back(lo);
      keep.push_back(hi);
      keep.push_back(idx[end - 1]);
      start = end;
    }
    keep.push_back(peak);
  }
  std::sort(keep.begin(), keep.end());
  keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
  return keep;
}

}  // namespace candle_graph::viewer
