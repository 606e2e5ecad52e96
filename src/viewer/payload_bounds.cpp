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

// Depth of every node (0: a root) and its stand-in: the node itself when at most `max_depth`
// deep, else its ancestor at that depth. Memoized walks up: linear whatever the stream order (a
// trusted trace may start a child before its parent; health has refused parent cycles).
struct Depths {
  std::vector<std::uint32_t> depth, stand_in;
};
Depths depths(const std::vector<std::uint32_t>& parent, std::size_t max_depth) {
  const std::size_t n = parent.size();
  Depths d{std::vector<std::uint32_t>(n, kNoIndex), std::vector<std::uint32_t>(n, kNoIndex)};
  std::vector<std::uint32_t> path;
  for (std::uint32_t i = 0; i < n; ++i) {
    path.clear();
    for (std::uint32_t a = i; a != kNoIndex && d.depth[a] == kNoIndex; a = parent[a])
      path.push_back(a);
    for (auto it = path.rbegin(); it != path.rend(); ++it) {
      const std::uint32_t p = *it, up = parent[p];
      d.depth[p] = up == kNoIndex ? 0 : d.depth[up] + 1;
      d.stand_in[p] = d.depth[p] <= max_depth ? p : d.stand_in[up];
    }
  }
  return d;
}

// The `n` largest of `ids` by `field`, largest first (ties: the earlier node).
template <typename Field>
std::vector<std::uint32_t> top_by(const ExecutionGraph& g, std::vector<std::uint32_t> ids,
                                  std::size_t n, Field field) {
  const std::size_t k = std::min(n, ids.size());
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(k), ids.end(),
                    [&](std::uint32_t a, std::uint32_t b) {
                      const auto fa = field(g.nodes[a]), fb = field(g.nodes[b]);
                      return fa != fb ? fa > fb : a < b;
                    });
  ids.resize(k);
  return ids;
}
constexpr auto kSelf = [](const GraphNode& x) { return x.self_time_ns; };
constexpr auto kPeak = [](const GraphNode& x) { return x.peak_bytes; };

// Keeps nodes with their ancestors while at most `budget` are kept; a node too deep is replaced
// by its stand-in. A chain that would pass the budget is left out whole: every kept node keeps
// its ancestors, and a dropped node folds into its nearest kept one.
class Keeper {
 public:
  Keeper(const std::vector<std::uint32_t>& parent, const Depths& depths, std::size_t budget,
         std::vector<bool>& kept)
      : parent_(parent), depths_(depths), budget_(budget), kept_(kept) {}

  void keep(std::uint32_t node) {
    path_.clear();
    for (std::uint32_t a = depths_.stand_in[node]; a != kNoIndex && !kept_[a]; a = parent_[a])
      path_.push_back(a);
    if (count_ + path_.size() > budget_) return;
    for (std::uint32_t p : path_) kept_[p] = true;
    count_ += path_.size();
  }

 private:
  const std::vector<std::uint32_t>& parent_;
  const Depths& depths_;
  std::size_t budget_;
  std::vector<bool>& kept_;
  std::vector<std::uint32_t> path_;
  std::size_t count_ = 0;
};

// The spans at depth 1 and 2 (the measured region and the steps): all of them when there are at
// most `n`; else the slowest and the heaviest `n` (a flat trace of a million spans under one root
// kept every node, 790 MB of HTML).
std::vector<std::uint32_t> top_levels(const ExecutionGraph& g, const Depths& d, std::size_t n) {
  std::vector<std::uint32_t> levels;
  for (std::uint32_t i = 0; i < g.nodes.size(); ++i)
    if (!g.nodes[i].is_op_node() && (d.depth[i] == 1 || d.depth[i] == 2)) levels.push_back(i);
  if (levels.size() <= n) return levels;
  std::vector<std::uint32_t> out = top_by(g, levels, n, kSelf);
  const std::vector<std::uint32_t> heaviest = top_by(g, std::move(levels), n, kPeak);
  out.insert(out.end(), heaviest.begin(), heaviest.end());
  return out;
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
  const Depths d = depths(parent, limits.kept_depth);
  Keeper keeper(parent, d, limits.kept_nodes, sel.kept);
  std::vector<std::uint32_t> spans, ops;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (d.depth[i] == 0) keeper.keep(i);  // the root: every other node folds into it
    (g.nodes[i].is_op_node() ? ops : spans).push_back(i);
  }
  for (std::uint32_t i : top_levels(g, d, limits.top_spans)) keeper.keep(i);
  // The criteria take turns, best first, so that a budget reached early leaves none out.
  const std::vector<std::uint32_t> ranked[] = {
      top_by(g, spans, limits.top_spans, kSelf), top_by(g, ops, limits.top_ops, kSelf),
      top_by(g, spans, limits.top_spans, kPeak), top_by(g, ops, limits.top_ops, kPeak)};
  for (std::size_t r = 0; r < std::max(limits.top_spans, limits.top_ops); ++r)
    for (const auto& list : ranked)
      if (r < list.size()) keeper.keep(list[r]);
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
