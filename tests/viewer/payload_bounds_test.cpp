// select_nodes / select_memory_points (viewer/payload_bounds.hpp, compatibility.md "Viewer"):
// checked against properties and simple quadratic oracles written here (parent walks, sorts),
// never against numbers printed by the code.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "candle_graph/analysis.hpp"
#include "support/trace_lines.hpp"
#include "viewer/payload_bounds.hpp"
#include "viewer_test_helpers.hpp"

using namespace candle_graph;
using cgtest::join_lines;
using cgtest::meta_line;
using cgtest::span_end;
using cgtest::span_start;
using viewer::NodeSelection;
using viewer::PayloadLimits;
using viewer::select_memory_points;
using viewer::select_nodes;
using viewer::select_op_rows;

namespace {

// Parent node of a node, found independently of payload_bounds.cpp: an op's parent is its
// span's node (node index = span index); a span's parent is looked up by its parent_id.
std::uint32_t parent_of(const ExecutionGraph& g, std::uint32_t i) {
  const GraphNode& n = g.nodes[i];
  if (n.is_op_node()) return n.span;
  const auto& parent_id = g.doc->spans()[n.span].parent_id;
  return parent_id ? g.doc->find_span(*parent_id) : kNoIndex;
}

std::size_t depth_of(const ExecutionGraph& g, std::uint32_t i) {
  std::size_t d = 0;
  for (std::uint32_t p = parent_of(g, i); p != kNoIndex; p = parent_of(g, p)) ++d;
  return d;
}

// The node that stands in for `i` when nodes deeper than `max_depth` are not kept: its ancestor
// at that depth (walked up one parent at a time).
std::uint32_t stand_in_of(const ExecutionGraph& g, std::uint32_t i, std::size_t max_depth) {
  for (std::size_t d = depth_of(g, i); d > max_depth; --d) i = parent_of(g, i);
  return i;
}

// The k-th largest value of `field` among the nodes of one class (0 when the class has < k).
template <typename F>
std::uint64_t kth_largest(const ExecutionGraph& g, bool ops, std::size_t k, F field) {
  std::vector<std::uint64_t> v;
  for (const GraphNode& n : g.nodes)
    if (n.is_op_node() == ops) v.push_back(field(n));
  if (v.size() < k || k == 0) return 0;
  std::sort(v.begin(), v.end(), std::greater<>());
  return v[k - 1];
}

struct Graph {
  std::string text;
  TraceDocument doc;
  ExecutionGraph g;
  explicit Graph(std::string t)
      : text(std::move(t)), doc(parse_trace_text(text)), g(build_from_trace(doc)) {}
};

// Small limits so a trace of a few hundred nodes exercises the bounded path.
PayloadLimits small_limits() {
  PayloadLimits l;
  l.full_detail_nodes = 20;
  l.top_spans = 3;
  l.top_ops = 4;
  l.memory_buckets = 5;
  return l;
}

void expect_selection_invariants(const ExecutionGraph& g, const NodeSelection& sel,
                                 const PayloadLimits& limits) {
  const std::size_t n = g.nodes.size();
  ASSERT_EQ(sel.kept.size(), n);
  ASSERT_EQ(sel.folded.size(), n);

  std::uint64_t kept = 0, dropped_spans = 0, dropped_ops = 0, spans = 0, ops = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    (g.nodes[i].is_op_node() ? ops : spans) += 1;
    if (sel.kept[i])
      ++kept;
    else
      (g.nodes[i].is_op_node() ? dropped_ops : dropped_spans) += 1;
  }
  EXPECT_EQ(sel.kept_count, kept);
  EXPECT_EQ(sel.dropped_spans, dropped_spans);
  EXPECT_EQ(sel.dropped_ops, dropped_ops);
  EXPECT_EQ(kept + dropped_spans + dropped_ops, n);
  EXPECT_EQ(spans, g.doc->spans().size());
  EXPECT_EQ(ops, g.doc->ops().size());

  // Every kept node's ancestors are kept.
  for (std::uint32_t i = 0; i < n; ++i) {
    if (!sel.kept[i]) continue;
    for (std::uint32_t p = parent_of(g, i); p != kNoIndex; p = parent_of(g, p)) {
      ASSERT_TRUE(sel.kept[p]) << g.node_id(i).str() << " kept, ancestor " << g.node_id(p).str();
    }
  }

  // Folding oracle: walk each dropped node up to its nearest kept ancestor.
  std::vector<NodeSelection::Folded> expect(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (sel.kept[i]) continue;
    std::uint32_t a = parent_of(g, i);
    while (a != kNoIndex && !sel.kept[a]) a = parent_of(g, a);
    ASSERT_NE(a, kNoIndex) << g.node_id(i).str() << " has no kept ancestor";
    (g.nodes[i].is_op_node() ? expect[a].ops : expect[a].spans) += 1;
    expect[a].self_time_ns += g.nodes[i].self_time_ns;
  }
  std::uint64_t folded_spans = 0, folded_ops = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    EXPECT_EQ(sel.folded[i].spans, expect[i].spans) << g.node_id(i).str();
    EXPECT_EQ(sel.folded[i].ops, expect[i].ops) << g.node_id(i).str();
    EXPECT_EQ(sel.folded[i].self_time_ns, expect[i].self_time_ns) << g.node_id(i).str();
    folded_spans += sel.folded[i].spans;
    folded_ops += sel.folded[i].ops;
  }
  EXPECT_EQ(folded_spans, sel.dropped_spans);
  EXPECT_EQ(folded_ops, sel.dropped_ops);
  EXPECT_EQ(kept + folded_spans + folded_ops, n);

  if (n <= limits.full_detail_nodes) return;
  EXPECT_LE(sel.kept_count, limits.kept_nodes);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (sel.kept[i]) {
      EXPECT_LE(depth_of(g, i), limits.kept_depth) << g.node_id(i).str();
    }
  }
  // A chain is left out only when it would pass the budget, and a chain is at most
  // kept_depth + 1 nodes: with that much room left, nothing was left out for the budget.
  if (sel.kept_count + limits.kept_depth + 1 > limits.kept_nodes) return;
  // The slowest and heaviest of each class are kept (or, too deep, their ancestor at the kept
  // depth): everything strictly above the k-th largest value (ties may go either way).
  const auto self = [](const GraphNode& x) { return x.self_time_ns; };
  const auto peak = [](const GraphNode& x) { return x.peak_bytes; };
  for (bool op_class : {false, true}) {
    const std::size_t k = op_class ? limits.top_ops : limits.top_spans;
    const std::uint64_t self_k = kth_largest(g, op_class, k, self);
    const std::uint64_t peak_k = kth_largest(g, op_class, k, peak);
    std::size_t only_top = 0;  // kept for being top, not for being an ancestor or a top level
    for (std::uint32_t i = 0; i < n; ++i) {
      const GraphNode& x = g.nodes[i];
      if (x.is_op_node() != op_class) continue;
      if (x.self_time_ns > self_k || x.peak_bytes > peak_k) {
        EXPECT_TRUE(sel.kept[stand_in_of(g, i, limits.kept_depth)]) << g.node_id(i).str();
      }
      if (!sel.kept[i]) continue;
      bool has_kept_child = false;
      for (std::uint32_t c = 0; c < n; ++c) has_kept_child |= sel.kept[c] && parent_of(g, c) == i;
      const bool top_level = !op_class && depth_of(g, i) <= 2;
      if (has_kept_child || top_level || depth_of(g, i) == limits.kept_depth) continue;
      // Nothing else is kept: a leaf of the kept tree must be in a top set (or stand in at the
      // kept depth for deeper nodes, checked in the tests of deep traces).
      EXPECT_TRUE(x.self_time_ns >= self_k || x.peak_bytes >= peak_k) << g.node_id(i).str();
      ++only_top;
    }
    EXPECT_LE(only_top, 2 * k);
  }
  // The top three levels (root, measured region, step spans) are kept when the levels below the
  // roots hold at most top_spans spans; beyond, the roots and at most 2·top_spans of the rest
  // (the slowest and the heaviest).
  std::size_t below_roots = 0, below_roots_kept = 0;
  for (std::uint32_t i = 0; i < g.doc->spans().size(); ++i) {
    const std::size_t d = depth_of(g, i);
    if (d == 0) {
      EXPECT_TRUE(sel.kept[i]) << g.node_id(i).str();
    } else if (d <= 2) {
      ++below_roots;
    }
  }
  for (std::uint32_t i = 0; i < g.doc->spans().size(); ++i) {
    const std::size_t d = depth_of(g, i);
    if (d == 0 || d > 2) continue;
    if (below_roots <= limits.top_spans) {
      EXPECT_TRUE(sel.kept[i]) << g.node_id(i).str();
    }
    bool has_kept_child = false;
    for (std::uint32_t c = 0; c < n; ++c) has_kept_child |= sel.kept[c] && parent_of(g, c) == i;
    below_roots_kept += sel.kept[i] && !has_kept_child ? 1 : 0;
  }
  // Kept as top levels (not as ancestors): the top sets of the spans and of the levels.
  if (below_roots > limits.top_spans) {
    EXPECT_LE(below_roots_kept, 4 * limits.top_spans);
  }
}

}  // namespace

TEST(SelectNodes, BelowTheLimitEverythingIsKept) {
  const Graph t(cg_viewer_test::synth_text(4, 4));
  const NodeSelection sel = select_nodes(t.g, PayloadLimits{});
  EXPECT_EQ(sel.kept_count, t.g.nodes.size());
  EXPECT_EQ(std::count(sel.kept.begin(), sel.kept.end(), true),
            static_cast<std::ptrdiff_t>(t.g.nodes.size()));
  EXPECT_EQ(sel.dropped_spans + sel.dropped_ops, 0u);
  expect_selection_invariants(t.g, sel, PayloadLimits{});
}

TEST(SelectNodes, TheLimitIsInclusive) {
  const Graph t(cg_viewer_test::synth_text(6, 5, 2));
  PayloadLimits at = small_limits();
  at.full_detail_nodes = t.g.nodes.size();
  EXPECT_EQ(select_nodes(t.g, at).kept_count, t.g.nodes.size());
  PayloadLimits below = at;
  below.full_detail_nodes = t.g.nodes.size() - 1;
  const NodeSelection sel = select_nodes(t.g, below);
  EXPECT_LT(sel.kept_count, t.g.nodes.size());
  expect_selection_invariants(t.g, sel, below);
}

TEST(SelectNodes, AboveTheLimitKeepsTopNodesWithAncestorsAndFoldsTheRest) {
  for (std::uint64_t seed : {1, 2, 3, 4}) {
    const Graph t(cg_viewer_test::synth_text(12, 6, seed));
    const PayloadLimits limits = small_limits();
    ASSERT_GT(t.g.nodes.size(), limits.full_detail_nodes);
    const NodeSelection sel = select_nodes(t.g, limits);
    SCOPED_TRACE("seed " + std::to_string(seed));
    expect_selection_invariants(t.g, sel, limits);
    // Something was folded at all, and spans as well as ops.
    EXPECT_GT(sel.dropped_ops, 0u);
    EXPECT_GT(sel.dropped_spans, 0u);
    // Bounded: top sets (2 per class and criterion), each with at most `depth` ancestors, plus
    // the top three levels.
    std::size_t max_depth = 0, top_levels = 0;
    for (std::uint32_t i = 0; i < t.g.nodes.size(); ++i) {
      max_depth = std::max(max_depth, depth_of(t.g, i));
      top_levels += !t.g.nodes[i].is_op_node() && depth_of(t.g, i) <= 2;
    }
    EXPECT_LE(sel.kept_count,
              2 * (limits.top_spans + limits.top_ops) * (max_depth + 1) + top_levels);
  }
}

TEST(SelectNodes, TheSingleSlowestAndHeaviestOpSurviveTinyLimits) {
  const Graph t(cg_viewer_test::synth_text(20, 8, 5));
  PayloadLimits limits = small_limits();
  limits.top_spans = 1;
  limits.top_ops = 1;
  const NodeSelection sel = select_nodes(t.g, limits);
  std::uint32_t slowest = kNoIndex, heaviest = kNoIndex;
  for (std::uint32_t i = 0; i < t.g.nodes.size(); ++i) {
    const GraphNode& x = t.g.nodes[i];
    if (!x.is_op_node()) continue;
    if (slowest == kNoIndex || x.self_time_ns > t.g.nodes[slowest].self_time_ns) slowest = i;
    if (heaviest == kNoIndex || x.peak_bytes > t.g.nodes[heaviest].peak_bytes) heaviest = i;
  }
  ASSERT_NE(slowest, kNoIndex);
  EXPECT_TRUE(sel.kept[slowest]) << t.g.node_id(slowest).str();
  EXPECT_TRUE(sel.kept[heaviest]) << t.g.node_id(heaviest).str();
  expect_selection_invariants(t.g, sel, limits);
}

TEST(SelectNodes, AChildSpanBeforeItsParentInTheStreamChangesNothing) {
  // Health accepts a span_start that precedes its parent's span_start (stream order is not a
  // trace6.md §6 rule); the selection must still keep only what it documents.
  std::string text = cg_viewer_test::synth_text(12, 6, 2);
  const auto line_with = [&](std::string_view needle) {
    const std::size_t at = text.find(needle);
    EXPECT_NE(at, std::string::npos) << needle;
    const std::size_t begin = text.rfind('\n', at) + 1;
    return std::pair(begin, text.find('\n', at) + 1 - begin);
  };
  const auto [child, child_len] = line_with(R"("name":"synth/update-000000000003/forward/layer5")");
  const std::string moved = text.substr(child, child_len);
  text.erase(child, child_len);
  const auto [parent, parent_len] = line_with(R"("name":"synth/update-000000000003/forward",)");
  text.insert(parent, moved);
  const Graph t(text);
  PayloadLimits limits = small_limits();
  limits.top_spans = 1;
  expect_selection_invariants(t.g, select_nodes(t.g, limits), limits);
}

// A flat trace: one root with many child spans (depth 1), more than the limits allow. Every one
// of them was kept as a "top level" (a million children gave 790 MB of HTML); now the root and
// the slowest and heaviest of them are, and the rest fold into the root.
TEST(SelectNodes, AFlatTraceOfManyChildrenIsBoundedToo) {
  std::vector<std::string> lines = {meta_line(), span_start("root", "", 0, true)};
  constexpr std::uint64_t kChildren = 200;
  for (std::uint64_t c = 1; c <= kChildren; ++c) {
    // Child c runs for c ns: the slowest children are the last ones written.
    lines.push_back(span_start("c" + std::to_string(c), "root", 1000 * c));
    lines.push_back(span_end("c" + std::to_string(c), c));
  }
  lines.push_back(span_end("root", 1000 * (kChildren + 1)));
  const Graph t(join_lines(lines));
  const PayloadLimits limits = small_limits();
  ASSERT_GT(t.g.nodes.size(), limits.full_detail_nodes);
  const NodeSelection sel = select_nodes(t.g, limits);
  expect_selection_invariants(t.g, sel, limits);
  // The root, and per top set (levels, spans) at most top_spans by self time and top_spans by
  // peak bytes.
  EXPECT_LE(sel.kept_count, 1 + 4 * limits.top_spans);
  EXPECT_EQ(sel.dropped_spans, t.g.nodes.size() - sel.kept_count);
  // The slowest children, c200 down to c198 (self time = duration: no child has children).
  for (std::uint64_t c = kChildren; c > kChildren - limits.top_spans; --c) {
    const std::uint32_t s = t.doc.find_span("c" + std::to_string(c));
    EXPECT_TRUE(sel.kept[s]) << "c" << c;
  }
}

namespace {

std::string op_line(std::string_view span, std::uint64_t timestamp, std::uint64_t duration) {
  return R"({"kind":"op","span_id":")" + std::string(span) +
         R"(","op_name":"mm","dtype":"f32","device":"cpu","timestamp_ns":)" +
         std::to_string(timestamp) + R"(,"duration_ns":)" + std::to_string(duration) + "}";
}

// Spans `prefix`0 … `prefix`(length − 1), each the parent of the next, below `parent`, from
// `start`; `ops` ops in the last one, lasting 1, 2, … ns. Each span closes 1 ns after its child.
void add_chain(std::vector<std::string>& lines, const std::string& prefix,
               const std::string& parent, std::size_t length, std::uint64_t start,
               std::uint64_t ops) {
  std::string up = parent;
  for (std::size_t i = 0; i < length; ++i) {
    const std::string id = prefix + std::to_string(i);
    lines.push_back(span_start(id, up, start + i));
    up = id;
  }
  const std::uint64_t ops_at = start + length;
  for (std::uint64_t k = 0; k < ops; ++k) lines.push_back(op_line(up, ops_at, k + 1));
  for (std::size_t i = length; i-- > 0;)
    lines.push_back(span_end(prefix + std::to_string(i), (length - i) * 2 + ops + 1));
}

}  // namespace

// One chain of 300 spans with the ops at its end. A kept node keeps its ancestors, so the slowest
// op kept the whole chain (a chain of a million spans gave 880 MB of HTML); now nothing deeper
// than kept_depth is kept, and the chain below it folds into its node at that depth.
TEST(SelectNodes, ADeepChainIsCutAtTheKeptDepth) {
  std::vector<std::string> lines = {meta_line(), span_start("root", "", 0),
                                    span_start("m", "root", 0, true)};
  constexpr std::size_t kLength = 300;
  add_chain(lines, "s", "m", kLength, 1, 30);
  lines.push_back(span_end("m", 10'000));
  lines.push_back(span_end("root", 10'000));
  const Graph t(join_lines(lines));
  PayloadLimits limits = small_limits();
  limits.kept_depth = 16;
  const NodeSelection sel = select_nodes(t.g, limits);
  expect_selection_invariants(t.g, sel, limits);
  // Root (depth 0), m (1) and s0 … s14 (2 … 16): the only nodes at most 16 deep, all ancestors
  // of the slowest op's stand-in.
  EXPECT_EQ(sel.kept_count, limits.kept_depth + 1);
  const std::uint32_t stand_in = t.doc.find_span("s" + std::to_string(limits.kept_depth - 2));
  ASSERT_TRUE(sel.kept[stand_in]);
  // Everything below it folded into it: the rest of the chain and all 30 ops, whose self time is
  // 1 + 2 + … + 30 ns plus the spans' own 1 ns each.
  EXPECT_EQ(sel.folded[stand_in].spans, kLength - (limits.kept_depth - 1));
  EXPECT_EQ(sel.folded[stand_in].ops, 30u);
}

// Twenty chains of 30 spans below the measured span, each ending in one op. Every op is a top op
// and keeps a chain of 24 spans: 480 nodes, more than the budget of 100 allows.
TEST(SelectNodes, ManyDeepChainsStayWithinTheNodeBudget) {
  std::vector<std::string> lines = {meta_line(), span_start("root", "", 0),
                                    span_start("m", "root", 0, true)};
  constexpr std::size_t kChains = 20, kLength = 30;
  for (std::size_t c = 0; c < kChains; ++c)
    add_chain(lines, "c" + std::to_string(c) + "-", "m", kLength, 100 * c + 1, 1);
  lines.push_back(span_end("m", 100'000));
  lines.push_back(span_end("root", 100'000));
  const Graph t(join_lines(lines));
  PayloadLimits limits = small_limits();
  limits.top_ops = kChains;
  limits.kept_depth = 25;
  limits.kept_nodes = std::numeric_limits<std::size_t>::max();
  const NodeSelection unbounded = select_nodes(t.g, limits);
  ASSERT_GT(unbounded.kept_count, 100u) << "the budget below would not bind";
  limits.kept_nodes = 100;
  const NodeSelection sel = select_nodes(t.g, limits);
  expect_selection_invariants(t.g, sel, limits);
  EXPECT_LE(sel.kept_count, limits.kept_nodes);
  // The slowest op comes second among the ranked candidates, long before the budget binds.
  std::uint32_t slowest = kNoIndex;
  for (std::uint32_t i = 0; i < t.g.nodes.size(); ++i)
    if (t.g.nodes[i].is_op_node() &&
        (slowest == kNoIndex || t.g.nodes[i].self_time_ns > t.g.nodes[slowest].self_time_ns))
      slowest = i;
  ASSERT_NE(slowest, kNoIndex);
  EXPECT_TRUE(sel.kept[stand_in_of(t.g, slowest, limits.kept_depth)]);
}

// ---- memory points ---------------------------------------------------------------------------

namespace {

// A hand-made timeline of two interleaved devices with known peaks (select_memory_points reads
// only `timeline`).
MemoryProfile two_device_profile(std::size_t per_device, std::uint64_t step_ns) {
  MemoryProfile m;
  for (std::size_t i = 0; i < per_device; ++i) {
    for (std::string_view dev : {std::string_view("cpu"), std::string_view("cuda:0")}) {
      MemoryTimelinePoint p;
      p.timestamp_ns = 1'000 + i * step_ns + (dev == "cpu" ? 0 : 1);
      p.device = dev;
      // A saw tooth with one unique maximum per device: cpu at i = per_device/3, cuda at 2/3.
      const std::size_t top = dev == "cpu" ? per_device / 3 : 2 * per_device / 3;
      p.live_bytes = (i % 17) * 100 + (i == top ? 1'000'000 : 0);
      m.timeline.push_back(p);
    }
  }
  return m;
}

struct DeviceFacts {
  std::uint32_t first = kNoIndex, last = kNoIndex, peak = kNoIndex;
};
std::map<std::string_view, DeviceFacts> device_facts(const MemoryProfile& m) {
  std::map<std::string_view, DeviceFacts> f;
  for (std::uint32_t i = 0; i < m.timeline.size(); ++i) {
    DeviceFacts& d = f[m.timeline[i].device];
    if (d.first == kNoIndex) d.first = i;
    d.last = i;
    if (d.peak == kNoIndex || m.timeline[i].live_bytes > m.timeline[d.peak].live_bytes) d.peak = i;
  }
  return f;
}

void expect_points_invariants(const MemoryProfile& m, const std::vector<std::uint32_t>& keep,
                              const PayloadLimits& limits) {
  ASSERT_TRUE(std::is_sorted(keep.begin(), keep.end()));
  ASSERT_EQ(std::adjacent_find(keep.begin(), keep.end()), keep.end()) << "duplicates";
  for (std::uint32_t i : keep) ASSERT_LT(i, m.timeline.size());
  const std::set<std::uint32_t> kept(keep.begin(), keep.end());
  const auto facts = device_facts(m);
  for (const auto& [dev, d] : facts) {
    EXPECT_TRUE(kept.count(d.first)) << dev << " first";
    EXPECT_TRUE(kept.count(d.last)) << dev << " last";
    EXPECT_TRUE(kept.count(d.peak)) << dev << " peak";
  }
  if (m.timeline.size() <= 2 * limits.memory_buckets) return;
  // Per device at most first/min/max/last of each bucket plus the peak (the header's rule).
  EXPECT_LE(keep.size(), facts.size() * (4 * limits.memory_buckets + 1));
}

// Buckets recomputed here with 128-bit integer arithmetic (no rounding, no wrap): equal widths
// over [t0, t1] per device, bucket = (t − t0) · B / (t1 − t0 + 1). For every bucket, a kept point
// carries the bucket's minimum and one its maximum.
void expect_bucket_extremes_kept(const MemoryProfile& m, const std::vector<std::uint32_t>& keep,
                                 const PayloadLimits& limits) {
  for (const auto& [dev, d] : device_facts(m)) {
    const std::uint64_t t0 = m.timeline[d.first].timestamp_ns;
    const std::uint64_t t1 = m.timeline[d.last].timestamp_ns;
    const auto bucket = [&](std::uint64_t t) {
      return static_cast<std::uint64_t>(static_cast<unsigned __int128>(t - t0) *
                                        limits.memory_buckets /
                                        (static_cast<unsigned __int128>(t1 - t0) + 1));
    };
    std::map<std::uint64_t, std::pair<std::uint64_t, std::uint64_t>> extremes;  // min, max
    for (const MemoryTimelinePoint& p : m.timeline) {
      if (p.device != dev) continue;
      auto [it, fresh] = extremes.try_emplace(bucket(p.timestamp_ns), p.live_bytes, p.live_bytes);
      it->second.first = std::min(it->second.first, p.live_bytes);
      it->second.second = std::max(it->second.second, p.live_bytes);
    }
    EXPECT_LE(extremes.size(), limits.memory_buckets) << dev;
    std::map<std::uint64_t, std::pair<bool, bool>> found;
    for (std::uint32_t i : keep) {
      const MemoryTimelinePoint& p = m.timeline[i];
      if (p.device != dev) continue;
      const std::uint64_t b = bucket(p.timestamp_ns);
      found[b].first |= p.live_bytes == extremes.at(b).first;
      found[b].second |= p.live_bytes == extremes.at(b).second;
    }
    for (const auto& [b, mm] : extremes) {
      EXPECT_TRUE(found[b].first) << dev << " bucket " << b << " min " << mm.first;
      EXPECT_TRUE(found[b].second) << dev << " bucket " << b << " max " << mm.second;
    }
  }
}

}  // namespace

TEST(SelectMemoryPoints, SmallTimelinesAreKeptWhole) {
  const MemoryProfile m = two_device_profile(5, 10);  // 10 points ≤ 2 × 5 buckets
  PayloadLimits limits = small_limits();
  const std::vector<std::uint32_t> keep = select_memory_points(m, limits);
  ASSERT_EQ(keep.size(), m.timeline.size());
  for (std::uint32_t i = 0; i < keep.size(); ++i) EXPECT_EQ(keep[i], i);
  EXPECT_TRUE(select_memory_points(MemoryProfile{}, limits).empty());
}

TEST(SelectMemoryPoints, LargeTimelinesKeepFirstLastPeakAndBucketExtremes) {
  const MemoryProfile m = two_device_profile(1'000, 1'000);
  const PayloadLimits limits = small_limits();
  const std::vector<std::uint32_t> keep = select_memory_points(m, limits);
  expect_points_invariants(m, keep, limits);
  EXPECT_LT(keep.size(), m.timeline.size() / 10);

  expect_bucket_extremes_kept(m, keep, limits);
}

TEST(SelectMemoryPoints, AllPointsAtOneInstantFormOneBucket) {
  MemoryProfile m;
  for (std::uint64_t i = 0; i < 50; ++i)
    m.timeline.push_back({7, "cpu", (i * 37) % 50, 0, {}});  // 37 ⊥ 50: live 0..49 permuted
  const PayloadLimits limits = small_limits();
  const std::vector<std::uint32_t> keep = select_memory_points(m, limits);
  expect_points_invariants(m, keep, limits);
  // One bucket: first, min, max, last, peak — at most 4 distinct (max == peak).
  EXPECT_LE(keep.size(), 4u);
  bool has_min = false;
  for (std::uint32_t i : keep) has_min |= m.timeline[i].live_bytes == 0;
  EXPECT_TRUE(has_min);
}

TEST(SelectMemoryPoints, ExtremeTimestampsStayBounded) {
  // The full u64 range: t1 − t0 + 1 wraps to 0 in 64-bit arithmetic.
  MemoryProfile m;
  for (std::uint64_t i = 0; i < 100; ++i) {
    const std::uint64_t t = i == 99 ? UINT64_MAX : i * (UINT64_MAX / 128);
    m.timeline.push_back({t, "cpu", i == 40 ? 1'000 : i, 0, {}});
  }
  const PayloadLimits limits = small_limits();
  const std::vector<std::uint32_t> keep = select_memory_points(m, limits);
  expect_points_invariants(m, keep, limits);
  // Five buckets of ~20 points each, not one bucket for the whole range.
  expect_bucket_extremes_kept(m, keep, limits);
}

TEST(SelectMemoryPoints, SyntheticTraceKeepsTheGlobalPeak) {
  const std::string text = cg_viewer_test::synth_text(30, 6, 3);
  const TraceDocument doc = parse_trace_text(text);
  const MemoryProfile m = analyze_memory(doc);
  const PayloadLimits limits = small_limits();
  ASSERT_GT(m.timeline.size(), 2 * limits.memory_buckets);
  const std::vector<std::uint32_t> keep = select_memory_points(m, limits);
  expect_points_invariants(m, keep, limits);
  // The summary's peak (computed by analyze_memory, not by the selection) is among the points.
  bool peak = false;
  for (std::uint32_t i : keep)
    peak |= m.timeline[i].live_bytes == m.summary.peak_bytes &&
            m.timeline[i].timestamp_ns == m.summary.peak_timestamp_ns;
  EXPECT_TRUE(peak);
  EXPECT_GT(m.summary.peak_bytes, 0u);
}

namespace {

// An op table with `n` rows in host-self order (descending) and device self times that are not
// in that order (a fixed pseudo-random permutation), as the op table gives them.
evidence::OpTable op_table_of(std::size_t n) {
  evidence::OpTable t;
  for (std::size_t i = 0; i < n; ++i) {
    evidence::OpRow r;
    r.host_self_ns = 1000 * (n - i);
    r.device_self_ns = (i * 7919) % 101;  // ties on purpose: 101 distinct values
    t.rows.push_back(r);
  }
  return t;
}

}  // namespace

TEST(SelectOpRows, AtOrBelowTheLimitEveryRowIsKept) {
  const evidence::OpTable t = op_table_of(50);
  std::vector<std::uint32_t> all(50);
  for (std::uint32_t i = 0; i < 50; ++i) all[i] = i;
  EXPECT_EQ(select_op_rows(t, 50), all);
  EXPECT_EQ(select_op_rows(t, 2000), all);
}

TEST(SelectOpRows, AboveTheLimitKeepsTheHeaviestByDeviceAndByHostSelfTime) {
  const evidence::OpTable t = op_table_of(500);
  for (std::size_t limit : {1u, 2u, 7u, 100u, 499u}) {
    const std::vector<std::uint32_t> kept = select_op_rows(t, limit);
    ASSERT_EQ(kept.size(), limit);
    EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end()));
    EXPECT_EQ(std::set<std::uint32_t>(kept.begin(), kept.end()).size(), limit);
    const std::set<std::uint32_t> in(kept.begin(), kept.end());
    // Oracle for the device half: a dropped row has at least ⌈limit/2⌉ kept rows with at least
    // its device self time (else it would rank among the first ⌈limit/2⌉ by device).
    for (std::uint32_t d = 0; d < t.rows.size(); ++d) {
      if (in.count(d)) continue;
      std::size_t heavier = 0;
      for (std::uint32_t k : kept) heavier += t.rows[k].device_self_ns >= t.rows[d].device_self_ns;
      EXPECT_GE(heavier, (limit + 1) / 2) << "row " << d << " limit " << limit;
    }
    // The host half: the first ⌊limit/2⌋ rows by host self time are kept whatever the device.
    for (std::uint32_t i = 0; i < limit / 2; ++i) EXPECT_TRUE(in.count(i)) << i;
  }
}
