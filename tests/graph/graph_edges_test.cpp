// graph::build_edges sorts edges by integer order keys and settles only the runs the keys
// cannot (graph_edges.cpp). Its result must equal the plain definition (trace6.md §7.2/§8): every
// candidate in insertion order, stably sorted by the formatted (from, to, kind) strings, then
// per run of equal keys every explicit edge, or else the first derived one. Random traces over
// ids chosen to defeat the 16-byte keys: long ids sharing their first 7, 15 or 30 bytes or
// differing only at byte 15, ids of exactly 15 bytes (whose op nodes are longer), ids that are
// prefixes of others, NUL bytes, ids that look like op nodes, op ordinals past 9.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "candle_graph/analysis.hpp"
#include "candle_graph/health.hpp"
#include "support/evidence_helpers.hpp"

using namespace candle_graph;

namespace {

// 14 ids at most: the durations below grow 15× per level.
const std::vector<std::string> kSpanIds = {
    "a", "ab", "a\\u0000", "abcdefg", "abcdefgh", "span-prefix-1", "span-prefix-10", "s1/op/1",
    "span-prefix-long-000001",
    // around the 15-byte window of the keys
    "abcdefghijklmno", "abcdefghijklmnop", "abcdefghijklmnoq",
    "span-prefix-very-long-shared-0a-tail", "span-prefix-very-long-shared-0b-tail"};
const std::vector<std::string> kTensorIds = {"t",
                                             "t1",
                                             "t10",
                                             "t1\\u0000",
                                             "tensor-000001",
                                             "tensor-000002",
                                             "tensor-0000011",
                                             "a/op/0",
                                             "a/op/10",
                                             "abcdefgh/op/3",
                                             "ab",
                                             "zzzzzzzzzzzz",
                                             "tensor-shared-prefix-a",
                                             "tensor-shared-prefix-ab",
                                             "tensor-shared-prefix-a\\u0000",
                                             "tensor-shared-pX-long",
                                             "tensor-shared-pY-long",
                                             "tensor-shared-p",
                                             "abcdefghijklmnop"};

std::string json_str(const std::string& s) {
  return "\"" + s + "\"";
}

// A trusted trace: span 0 of the pool is the measured root, every other span a child of an
// earlier one, each closed after its children; ops and explicit edges inside.
std::string random_trace(std::mt19937& rng) {
  const std::size_t spans = 2 + rng() % (kSpanIds.size() - 1);
  std::vector<std::string> ids(kSpanIds.begin(), kSpanIds.begin() + spans);
  std::shuffle(ids.begin() + 1, ids.end(), rng);
  std::vector<std::size_t> parent(spans, 0), depth(spans, 0);
  for (std::size_t i = 1; i < spans; ++i) {
    parent[i] = rng() % i;
    depth[i] = depth[parent[i]] + 1;
  }
  // At most 13 children of 1/15 of their parent's time each, and 13 ops of 1 ns: health's
  // "children exceed the parent" never fires (100 * 15^14 still fits a u64).
  auto duration = [&](std::size_t i) {
    std::uint64_t d = 100;
    for (std::size_t k = depth[i]; k < kSpanIds.size(); ++k) d *= 15;
    return std::to_string(d);
  };
  std::string body;
  std::vector<std::size_t> open;  // stack of span indices
  auto close_until = [&](std::size_t keep) {
    while (!open.empty() && open.back() != keep) {
      body += R"({"kind":"span_end","id":)" + json_str(ids[open.back()]) + R"(,"duration_ns":)" +
              duration(open.back()) + "}\n";
      open.pop_back();
    }
  };
  auto tensor = [&] { return json_str(kTensorIds[rng() % kTensorIds.size()]); };
  for (std::size_t i = 0; i < spans; ++i) {
    if (i > 0) close_until(parent[i]);
    body += R"({"kind":"span_start","id":)" + json_str(ids[i]);
    if (i > 0) body += R"(,"parent_id":)" + json_str(ids[parent[i]]);
    body += R"(,"name":"n","start_ns":0,"span_kind":"module")";
    body += i == 0 ? ",\"measured\":true}\n" : "}\n";
    open.push_back(i);
    for (std::size_t k = rng() % 14; k > 0; --k) {
      std::string inputs;
      for (std::size_t n = rng() % 4; n > 0; --n) inputs += (inputs.empty() ? "" : ",") + tensor();
      body += R"({"kind":"op","span_id":)" + json_str(ids[i]) + R"(,"op_name":"f","inputs":[)" +
              inputs + "]";
      if (rng() % 5 != 0) body += R"(,"output":)" + tensor();
      body += R"(,"shape":[2],"dtype":"f32","device":"cpu","duration_ns":1,"timestamp_ns":0})"
              "\n";
    }
    for (std::size_t k = rng() % 3; k > 0; --k)
      body += R"({"kind":"edge","from_span":)" + json_str(ids[rng() % (i + 1)]) + R"(,"to_span":)" +
              json_str(ids[rng() % (i + 1)]) +
              R"(,"duration_ns":5})"
              "\n";
  }
  close_until(spans);  // closes everything, the root last
  return body;
}

using Key = std::tuple<std::string, std::string, GraphEdgeKind>;
Key key_of(const GraphEdgeView& v) {
  return {v.from.str(), v.to.str(), v.kind};
}

std::vector<GraphEdge> reference_edges(const TraceDocument& doc, const ExecutionGraph& g) {
  std::vector<GraphEdge> c;
  for (std::uint32_t i = 0; i < doc.edges().size(); ++i)
    c.push_back({EdgeOrigin::explicit_edge, i, 0});
  for (std::uint32_t i = 0; i < doc.spans().size(); ++i)
    if (g.nodes[i].kind != GraphNodeKind::op && doc.spans()[i].parent_id)
      c.push_back({EdgeOrigin::parent_call, i, 0});
  for (std::uint32_t k = 0; k < doc.ops().size(); ++k) {
    if (!doc.ops()[k].output) continue;
    for (std::uint32_t j = 0; j < doc.ops()[k].inputs.size(); ++j)
      c.push_back({EdgeOrigin::data, k, j});
    c.push_back({EdgeOrigin::op_call, k, 0});
  }
  std::stable_sort(c.begin(), c.end(), [&](const GraphEdge& x, const GraphEdge& y) {
    return key_of(g.edge_of(x)) < key_of(g.edge_of(y));
  });
  std::vector<GraphEdge> out;
  for (std::size_t i = 0; i < c.size();) {
    std::size_t j = i + 1;
    while (j < c.size() && key_of(g.edge_of(c[j])) == key_of(g.edge_of(c[i]))) ++j;
    bool any_explicit = false;
    for (std::size_t k = i; k < j; ++k)
      if (c[k].origin == EdgeOrigin::explicit_edge) {
        out.push_back(c[k]);
        any_explicit = true;
      }
    if (!any_explicit) out.push_back(c[i]);
    i = j;
  }
  return out;
}

}  // namespace

TEST(GraphEdges, EqualTheSortedAndDeduplicatedCandidatesOnRandomTraces) {
  std::mt19937 rng(2026);
  for (int round = 0; round < 300; ++round) {
    const std::string text = cg_test::meta_line() + random_trace(rng);
    const TraceDocument doc = parse_trace_text(text, "<random>");
    const TraceHealth health = analyze_health(doc);
    ASSERT_TRUE(health.trusted) << health.error_summary() << "\n" << text;
    const ExecutionGraph g = build_from_trace(doc, health);
    const std::vector<GraphEdge> expected = reference_edges(doc, g);
    ASSERT_EQ(g.edges.size(), expected.size()) << text;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const GraphEdge& a = g.edges[i];
      const GraphEdge& b = expected[i];
      ASSERT_TRUE(a.origin == b.origin && a.index == b.index && a.input == b.input)
          << "edge " << i << ": " << std::get<0>(key_of(g.edge_of(a))) << " -> "
          << std::get<1>(key_of(g.edge_of(a))) << " vs " << std::get<0>(key_of(g.edge_of(b)))
          << " -> " << std::get<1>(key_of(g.edge_of(b))) << "\n"
          << text;
    }
  }
}
