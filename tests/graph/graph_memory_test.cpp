// trace6.md §14 Graph and Memory checklist items and hand-made edge cases. Expected
// values are worked out by hand in the comments from the fixture lines, not from the code.
#include <gtest/gtest.h>

#include <algorithm>

#include "candle_graph/analysis.hpp"
#include "device/device_time.hpp"
#include "graph/graph_json.hpp"
#include "output/json_text.hpp"
#include "support/evidence_helpers.hpp"
#include "support/files.hpp"
#include "trace/host_nesting.hpp"

using namespace candle_graph;

namespace {

TraceDocument doc_of(const std::string& body, const std::string& meta = "{}") {
  return parse_trace_text(cg_test::meta_line(meta) + body, "<test>");
}

// trace6.md §14 Graph: root 10 ms (measured) with children encoder 5 ms and decoder 1 ms, whose ops
// take 2 ms and 0.8 ms.
const char* kGraphBody = R"(
{"kind":"span_start","id":"root","name":"session","start_ns":0,"span_kind":"function","measured":true}
{"kind":"span_start","id":"encoder","parent_id":"root","name":"encoder","start_ns":1000000,"span_kind":"module"}
{"kind":"op","span_id":"encoder","op_name":"matmul","inputs":["x","w"],"output":"h","shape":[8,64],"dtype":"f32","device":"cpu","duration_ns":2000000,"timestamp_ns":1000000}
{"kind":"span_end","id":"encoder","duration_ns":5000000}
{"kind":"span_start","id":"b","parent_id":"root","name":"decoder","start_ns":6000000,"span_kind":"module"}
{"kind":"op","span_id":"b","op_name":"add","inputs":["h"],"output":"o","shape":[8,8],"dtype":"f32","device":"cpu","duration_ns":800000,"timestamp_ns":6000000}
{"kind":"span_end","id":"b","duration_ns":1000000}
{"kind":"gradient","event_id":"gradient-1","root":"vb","key":"w","state":"present","norm":1.5}
{"kind":"span_end","id":"root","duration_ns":10000000}
)";

TEST(Graph, ChecklistRootSelfTimeOpIdsEdgesAndSummary) {
  const TraceDocument doc = doc_of(kGraphBody);
  const ExecutionGraph g = build_from_trace(doc);
  const std::uint32_t root = g.find_node("root");
  // 10 ms − (5 ms + 1 ms): children only, the ops belong to the grandchildren.
  EXPECT_EQ(g.nodes[root].self_time_ns, 4000000u);
  EXPECT_EQ(g.summary.total_ms, 10.0);
  const std::uint32_t op = g.find_node("encoder/op/0");
  ASSERT_NE(op, kNoIndex);
  EXPECT_EQ(g.nodes[op].kind, GraphNodeKind::op);
  EXPECT_EQ(g.nodes[op].bytes, 8u * 64 * 4);
  // encoder: 5 ms − 2 ms op; decoder 1 ms − 0.8 ms.
  EXPECT_EQ(g.nodes[g.find_node("encoder")].self_time_ns, 3000000u);
  EXPECT_EQ(g.nodes[g.find_node("b")].self_time_ns, 200000u);
  // An op attached to span `b` becomes `b/op/0` with parent `b`.
  const std::uint32_t bop = g.find_node("b/op/0");
  ASSERT_NE(bop, kNoIndex);
  EXPECT_EQ(*g.parent_id(bop), "b");
  bool root_to_encoder = false;
  for (std::uint32_t i = 0; i < g.edges.size(); ++i) {
    const GraphEdgeView e = g.edge(i);
    if (e.from.str() == "root" && e.to.str() == "encoder" && e.kind == GraphEdgeKind::call)
      root_to_encoder = true;
  }
  EXPECT_TRUE(root_to_encoder);
  // Heaviest: encoder 2048 B before decoder 8×8×4 = 256 B; slowest: root 4 ms first.
  EXPECT_EQ(g.summary.heaviest_spans.front(), g.find_node("encoder"));
  EXPECT_EQ(g.summary.slowest_spans.front(), root);
  EXPECT_EQ(doc.gradients().size(), 1u);
}

// Op node ids are formatted on output, on the stack for span ids of up to 112 bytes and through
// a scratch string beyond: both must give `{span_id}/op/{n}` (ids built here by hand).
TEST(Graph, OpNodeIdsOfShortAndLongSpanIdsInTheJson) {
  for (const std::size_t length : {1u, 112u, 113u, 300u}) {
    const std::string span(length, 's');
    std::string body = R"({"kind":"span_start","id":")" + span +
                       R"(","name":"n","start_ns":0,"span_kind":"module","measured":true})"
                       "\n";
    for (int k = 0; k < 12; ++k)
      body += R"({"kind":"op","span_id":")" + span + R"(","op_name":"f","inputs":[],"output":"t)" +
              std::to_string(k) +
              R"(","shape":[1],"dtype":"f32","device":"cpu","duration_ns":1,"timestamp_ns":0})"
              "\n";
    body += R"({"kind":"span_end","id":")" + span +
            R"(","duration_ns":100})"
            "\n";
    const TraceDocument doc = doc_of(body);
    const ExecutionGraph g = build_from_trace(doc);
    output::JsonStream w;
    graph::write_graph_node(w, g, g.find_node(span + "/op/11"), output::KeyOrder::declaration);
    EXPECT_EQ(nlohmann::json::parse(w.take())["id"], span + "/op/11") << length;
  }
}

// With threads the memory replay runs beside the span and op nodes (unless both the edges and
// the timeline are wanted): the graph and its memory profile must be those of one thread, in
// every mode. The reference is the one-thread build of the same document, written as JSON.
// Memory events added to the checklist trace: h (2048 B) allocated, o (256 B) allocated, h freed.
TEST(Graph, ThreadsChangeNeitherTheGraphNorItsMemoryInAnyMode) {
  std::string body = kGraphBody;
  body.insert(body.rfind("{\"kind\":\"span_end\",\"id\":\"root\""), R"(
{"kind":"memory","timestamp_ns":1000000,"tensor_id":"h","span_id":"encoder","op_name":"matmul","device":"cpu","bytes":2048,"action":"alloc","shape":[8,64],"dtype":"f32","category":"activation"}
{"kind":"memory","timestamp_ns":6000000,"tensor_id":"o","span_id":"b","op_name":"add","device":"cpu","bytes":256,"action":"alloc","shape":[8,8],"dtype":"f32","category":"activation"}
{"kind":"memory","timestamp_ns":6500000,"tensor_id":"h","span_id":"b","device":"cpu","bytes":2048,"action":"free","shape":[8,64],"dtype":"f32","category":"activation"}
)");
  const TraceDocument doc = doc_of(body);
  auto json_of = [&](GraphOptions options) {
    const ExecutionGraph g = build_from_trace(doc, options);
    output::JsonStream w;  // the graph's JSON holds its memory profile too
    graph::write_graph(w, g, output::KeyOrder::declaration);
    return w.take();
  };
  for (const bool edges : {false, true})
    for (const bool timeline : {false, true}) {
      const std::string one = json_of({.edges = edges, .memory_timeline = timeline, .threads = 1});
      const std::string two = json_of({.edges = edges, .memory_timeline = timeline, .threads = 2});
      EXPECT_EQ(one, two) << "edges " << edges << ", timeline " << timeline;
      // The memory part is there to compare: the peak is h and o live at once (2304 bytes).
      EXPECT_NE(one.find("2304"), std::string::npos);
    }
}

// Device time on a CPU-only trace is zero everywhere, in vectors of one entry per op and span
// (the nesting walks are skipped there); with device work the walks still run. On
// tests/fixtures/device_work.jsonl, worked out by hand: aten::linear (thread 1, 1–5 ms) encloses
// aten::mm (1.5–3.5 ms), which encloses the launch (correlation 7) of the 1 ms kernel, so the
// kernel is aten::mm's own device time and, through the op walk, aten::linear's total; the
// memcpy's correlation 99 has no launch (unattributed, 0.5 ms); span s1 holds both (1.5 ms).
TEST(DeviceTime, CpuOnlyTracesAreZeroAndLaunchedWorkStillAddsUp) {
  auto device_time_of = [](const TraceDocument& doc) {
    return device::attribute_device_time(doc, nest_host_ops(doc).parent);
  };
  const TraceDocument cpu = doc_of(kGraphBody);
  const device::DeviceTime none = device_time_of(cpu);
  ASSERT_EQ(none.op_total_ns.size(), cpu.ops().size());
  ASSERT_EQ(none.span_total_ns.size(), cpu.spans().size());
  for (std::size_t k = 0; k < cpu.ops().size(); ++k)
    EXPECT_EQ(none.op_self_ns[k] + none.op_total_ns[k], 0u);
  for (std::size_t s = 0; s < cpu.spans().size(); ++s)
    EXPECT_EQ(none.span_self_ns[s] + none.span_total_ns[s], 0u);
  EXPECT_EQ(none.device_ns, 0u);

  const TraceDocument gpu = parse_trace(candle_graph::testing::fixture("device_work.jsonl"));
  const device::DeviceTime some = device_time_of(gpu);
  ASSERT_EQ(gpu.ops()[0].op_name, "aten::linear");
  ASSERT_EQ(gpu.ops()[1].op_name, "aten::mm");
  EXPECT_EQ(some.op_self_ns[0], 0u);
  EXPECT_EQ(some.op_total_ns[0], 1000000u);
  EXPECT_EQ(some.op_self_ns[1], 1000000u);
  EXPECT_EQ(some.op_total_ns[1], 1000000u);
  EXPECT_EQ(some.op_total_ns[2], 0u);  // the runtime call keeps 0
  EXPECT_EQ(some.span_total_ns[0], 1500000u);
  EXPECT_EQ(some.unattributed_ns, 500000u);
}

// Empty ids are ids like any other (the format allows them), and an empty string_view may hold a
// null pointer: every place that copies an id's bytes must take it (the sanitizer pass checks
// that no null pointer reaches memcpy). By the node id rule `{span_id}/op/{n}`, the ops of span
// "" are "/op/0" and "/op/1"; the one memory event (4 bytes) is the peak.
TEST(Graph, EmptySpanAndTensorIdsAreIdsLikeAnyOther) {
  const TraceDocument doc = doc_of(R"(
{"kind":"span_start","id":"","name":"root","start_ns":0,"span_kind":"function","measured":true}
{"kind":"op","span_id":"","op_name":"a","inputs":[""],"output":"","shape":[1],"dtype":"f32","device":"cpu","duration_ns":5,"timestamp_ns":1}
{"kind":"op","span_id":"","op_name":"b","inputs":[""],"output":"x","shape":[1],"dtype":"f32","device":"cpu","duration_ns":5,"timestamp_ns":10}
{"kind":"memory","timestamp_ns":2,"tensor_id":"","span_id":"","device":"cpu","bytes":4,"action":"alloc","shape":[1],"dtype":"f32"}
{"kind":"span_end","id":"","duration_ns":100}
)");
  const ExecutionGraph g = build_from_trace(doc);
  EXPECT_NE(g.find_node("/op/0"), kNoIndex);
  EXPECT_NE(g.find_node("/op/1"), kNoIndex);
  EXPECT_EQ(g.memory.summary.peak_bytes, 4u);
  ASSERT_EQ(g.memory.peak_breakdown.size(), 1u);
  EXPECT_EQ(g.memory.peak_breakdown[0].tensor_id, "");
  output::JsonStream w;
  graph::write_graph(w, g, output::KeyOrder::declaration);
  const nlohmann::json j = nlohmann::json::parse(w.take());
  EXPECT_EQ(j["spans"][1]["id"], "/op/0");
  EXPECT_FALSE(j["edges"].empty());
}

TEST(Graph, UntrustedTraceIsRefusedWithTheOriginalMessage) {
  // Two roots (health root_count) → build_from_trace fails before anything else.
  const TraceDocument doc = doc_of(R"(
{"kind":"span_start","id":"a","name":"a","start_ns":0,"span_kind":"function","measured":true}
{"kind":"span_end","id":"a","duration_ns":10}
{"kind":"span_start","id":"b","name":"b","start_ns":0,"span_kind":"function"}
{"kind":"span_end","id":"b","duration_ns":10}
)");
  try {
    build_from_trace(doc);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "trace is structurally untrusted: expected exactly one root span, found 2");
  }
}

// tests/fixtures/evidence/edge_cases.jsonl: an empty, zero-duration measured region `m` with one
// op, a span `k` of kind op whose op has no output, an allocation freed in another span, two
// devices (cuda:0 with a capacity sample, cpu without), a backward span `b` whose memory event
// happens in its child `bb` (no own step).
struct EdgeCases : ::testing::Test {
  TraceDocument doc = cg_test::load_fixture("edge_cases.jsonl");
  ExecutionGraph g = build_from_trace(doc);
  const GraphNode& n(const char* id) { return g.nodes[g.find_node(id)]; }
};

TEST_F(EdgeCases, ZeroDurationSpanUsesItsOpsAsEffectiveDuration) {
  // m: duration 0 → effective = its op 7 ns; self = 7 − 7 = 0.
  EXPECT_EQ(n("m").total_time_ns, 7u);
  EXPECT_EQ(n("m").self_time_ns, 0u);
  // r: 100 − (m 7 + k 30 + b 20) = 43; k: 30 − op 10 = 20; b: 20 − bb 5 = 15.
  EXPECT_EQ(n("r").self_time_ns, 43u);
  EXPECT_EQ(n("k").self_time_ns, 20u);
  EXPECT_EQ(n("b").self_time_ns, 15u);
}

TEST_F(EdgeCases, EmptyMeasuredRegionSummary) {
  // Only m is measured (0 ns): total_ms 0.0, and m alone is a summary candidate.
  EXPECT_EQ(g.summary.total_ms, 0.0);
  ASSERT_EQ(g.summary.slowest_spans.size(), 1u);
  EXPECT_EQ(g.node_id(g.summary.slowest_spans[0]).str(), "m");
  EXPECT_EQ(g.summary.heaviest_spans.size(), 1u);
}

TEST_F(EdgeCases, SpanOfKindOpAndOpWithoutOutput) {
  EXPECT_EQ(n("k").kind, GraphNodeKind::op);  // a span of kind op becomes an op node
  // Edges by hand: no r→k (kind op), nothing for k's op (no output); sorted by from, to, kind.
  std::vector<std::string> edges;
  for (std::uint32_t i = 0; i < g.edges.size(); ++i) {
    const GraphEdgeView e = g.edge(i);
    edges.push_back(e.from.str() + ">" + e.to.str() + ":" + std::string(to_string(e.kind)) + ":" +
                    std::to_string(e.duration_ns));
  }
  EXPECT_EQ(edges, (std::vector<std::string>{"b>bb:call:5", "m>m/op/0:call:7", "r>b:call:20",
                                             "r>m:call:7", "x>y:data:7"}));
  // k's op: empty shape → omitted; scalar f32 → 4 bytes (trace6.md §4.12 quirk: empty shape = 1
  // element).
  output::JsonStream w;
  graph::write_graph_node(w, g, g.find_node("k/op/0"), output::KeyOrder::declaration);
  const auto j = nlohmann::json::parse(w.take());
  EXPECT_FALSE(j.contains("shape"));
  EXPECT_EQ(j["storage_bytes"], 4);
  EXPECT_EQ(j["parent_id"], "k");
}

TEST_F(EdgeCases, MemoryAcrossDevicesAndSpans) {
  const MemoryProfile& m = g.memory;
  // Sorted events: 25 alloc t1 cuda 100, 30 alloc t2 cpu 50, 46 alloc g cuda 20, 60 free t1.
  ASSERT_EQ(m.timeline.size(), 4u);
  const std::uint64_t live[] = {100, 50, 120, 20};
  // cuda:0 capacity = 1000 + 9000; cpu has no sample → 0.
  const std::uint64_t free_bytes[] = {9900, 0, 9880, 9980};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(m.timeline[i].live_bytes, live[i]) << i;
    EXPECT_EQ(m.timeline[i].free_bytes, free_bytes[i]) << i;
  }
  // The free names span r, but releases t1's allocation (made in k), category activation.
  EXPECT_EQ(m.timeline[3].by_category.get(MemoryCategory::activation), 0u);
  EXPECT_EQ(m.timeline[3].by_category.get(MemoryCategory::gradient), 20u);
  EXPECT_EQ(m.summary.peak_bytes, 120u);
  EXPECT_EQ(m.summary.peak_timestamp_ns, 46u);
  EXPECT_EQ(m.summary.peak_device, "cuda:0");
  EXPECT_EQ(m.summary.total_alloc_bytes, 170u);
  // Live at the peak, all devices, bytes descending: t1 100, t2 50, g 20.
  ASSERT_EQ(m.peak_breakdown.size(), 3u);
  EXPECT_EQ(m.peak_breakdown[0].tensor_id, "t1");
  EXPECT_EQ(m.peak_breakdown[1].tensor_id, "t2");
  EXPECT_EQ(m.peak_breakdown[2].tensor_id, "g");
  ASSERT_EQ(m.by_device.size(), 2u);
  EXPECT_EQ(m.by_device[0].device, "cpu");
  EXPECT_EQ(m.by_device[0].capacity_bytes, 0u);
  EXPECT_EQ(m.by_device[1].device, "cuda:0");
  EXPECT_EQ(m.by_device[1].capacity_bytes, 10000u);
  EXPECT_EQ(m.by_device[1].peak_bytes, 120u);
  EXPECT_EQ(m.by_device[1].alloc_count, 2u);
  EXPECT_EQ(m.by_device[1].free_count, 1u);
}

TEST_F(EdgeCases, AutogradRetentionInsideTheBackwardSubtree) {
  // First event inside b's subtree: alloc g in bb at 46; cuda:0 live activation then = t1's 100.
  // (The original looks only at spans whose own step is backward and would report 0.)
  EXPECT_EQ(g.memory.summary.autograd_retained_bytes, 100u);
}

TEST_F(EdgeCases, EverySpanGetsThePeakOfItsAllocations) {
  // Peak allocations: t1 100 in k, t2 50 in r, g 20 in bb. Rolled up: bb 20 → b 20;
  // k max(100, own ops 4) = 100; m 8 (its op 2 × f32); r max(50, m 8, k 100, b 20) = 100.
  EXPECT_EQ(n("bb").peak_bytes, 20u);
  EXPECT_EQ(n("b").peak_bytes, 20u);
  EXPECT_EQ(n("k").peak_bytes, 100u);
  EXPECT_EQ(n("k").bytes, 4u);
  EXPECT_EQ(n("m").peak_bytes, 8u);
  EXPECT_EQ(n("r").peak_bytes, 100u);
  EXPECT_EQ(n("r").bytes, 0u);
}

TEST(Memory, ChecklistOneAllocAndFree) {
  // 100 × 100 f32 = 40 000 bytes.
  const TraceDocument doc = doc_of(R"(
{"kind":"span_start","id":"s1","name":"session","start_ns":0,"span_kind":"function","measured":true}
{"kind":"op","span_id":"s1","op_name":"matmul","inputs":[],"output":"t","shape":[100,100],"dtype":"f32","device":"cpu","duration_ns":5}
{"kind":"memory","timestamp_ns":1,"tensor_id":"t","span_id":"s1","device":"cpu","bytes":40000,"action":"alloc","shape":[100,100],"dtype":"f32"}
{"kind":"memory","timestamp_ns":2,"tensor_id":"t","span_id":"s1","device":"cpu","bytes":40000,"action":"free","shape":[100,100],"dtype":"f32"}
{"kind":"span_end","id":"s1","duration_ns":10}
)");
  const MemoryProfile p = analyze_memory(doc);
  EXPECT_EQ(p.summary.peak_bytes, 40000u);
  EXPECT_EQ(p.summary.alloc_count, 1u);
  EXPECT_EQ(p.summary.free_count, 1u);
  EXPECT_EQ(p.peak_breakdown.size(), 1u);
  EXPECT_EQ(p.timeline[1].free_bytes, 0u);  // no device_memory sample: capacity unknown
}

TEST(Memory, NoMemoryEventsInventNoLifetimes) {
  const TraceDocument doc = doc_of(R"(
{"kind":"span_start","id":"s1","name":"session","start_ns":0,"span_kind":"function","measured":true}
{"kind":"op","span_id":"s1","op_name":"matmul","output":"t","shape":[100,100],"dtype":"f32","device":"cpu","duration_ns":5}
{"kind":"span_end","id":"s1","duration_ns":10}
)");
  const MemoryProfile p = analyze_memory(doc);
  EXPECT_EQ(p.summary.peak_bytes, 0u);
  EXPECT_TRUE(p.timeline.empty());
  EXPECT_TRUE(p.peak_breakdown.empty());
  EXPECT_TRUE(p.by_device.empty());
  EXPECT_EQ(p.summary.peak_device, "");
}

TEST(Memory, SameTimestampAllocSortsBeforeFreeAndByTensorId) {
  // At t=5: free a, alloc b, alloc a2 (stream order). Sorted: alloc a2, alloc b, free a →
  // live 10 (a) → 30 (+a2 20) → 60 (+b 30) → 50 (−a 10). Peak 60 with three live tensors.
  const TraceDocument doc = doc_of(R"(
{"kind":"span_start","id":"s1","name":"session","start_ns":0,"span_kind":"function","measured":true}
{"kind":"memory","timestamp_ns":1,"tensor_id":"a","span_id":"s1","device":"cpu","bytes":10,"action":"alloc","dtype":"f32"}
{"kind":"memory","timestamp_ns":5,"tensor_id":"a","span_id":"s1","device":"cpu","bytes":10,"action":"free","dtype":"f32"}
{"kind":"memory","timestamp_ns":5,"tensor_id":"b","span_id":"s1","device":"cpu","bytes":30,"action":"alloc","dtype":"f32"}
{"kind":"memory","timestamp_ns":5,"tensor_id":"a2","span_id":"s1","device":"cpu","bytes":20,"action":"alloc","dtype":"f32"}
{"kind":"span_end","id":"s1","duration_ns":10}
)");
  const MemoryProfile p = analyze_memory(doc);
  ASSERT_EQ(p.timeline.size(), 4u);
  EXPECT_EQ(p.timeline[1].live_bytes, 30u);
  EXPECT_EQ(p.timeline[2].live_bytes, 60u);
  EXPECT_EQ(p.timeline[3].live_bytes, 50u);
  EXPECT_EQ(p.summary.peak_bytes, 60u);
  ASSERT_EQ(p.peak_breakdown.size(), 3u);
  EXPECT_EQ(p.peak_breakdown[0].tensor_id, "b");
  EXPECT_EQ(p.peak_breakdown[2].tensor_id, "a");
}

}  // namespace

// The peak breakdown's order, bytes descending then tensor id, on ids that tie in their first
// bytes, run past 8 bytes, are prefixes of each other or hold a zero byte. The expected order is
// std::sort of the (bytes, id) pairs written below, all live at the peak (none is freed).
TEST(Memory, PeakBreakdownOrdersEqualSizesByTensorIdBytewise) {
  const std::vector<std::pair<std::uint64_t, std::string>> allocs = {{64, "t10"},
                                                                     {64, "t1"},
                                                                     {64, "t100000000b"},
                                                                     {64, "t100000000a"},
                                                                     {64, "t1000000000"},
                                                                     {128, "z"},
                                                                     {64, std::string("t1\0x", 4)},
                                                                     {64, "T1"},
                                                                     {64, "t\xc3\xa9"},
                                                                     {128, "a"},
                                                                     {64, ""},
                                                                     {64, "t100000000"}};
  std::string body =
      R"({"kind":"span_start","id":"s1","name":"session","start_ns":0,"span_kind":"function","measured":true})"
      "\n";
  std::uint64_t ts = 0;
  for (const auto& [bytes, id] : allocs) {
    std::string quoted;
    output::append_json_string(quoted, id);
    body += R"({"kind":"memory","timestamp_ns":)" + std::to_string(++ts) + R"(,"tensor_id":)" +
            quoted + R"(,"span_id":"s1","device":"cpu","bytes":)" + std::to_string(bytes) +
            R"(,"action":"alloc","shape":[],"dtype":"f32"})" + "\n";
  }
  body += R"({"kind":"span_end","id":"s1","duration_ns":100})"
          "\n";
  const TraceDocument doc = doc_of(body);
  auto expected = allocs;
  std::sort(expected.begin(), expected.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  const MemoryProfile p = analyze_memory(doc);
  ASSERT_EQ(p.peak_breakdown.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(p.peak_breakdown[i].bytes, expected[i].first) << i;
    EXPECT_EQ(p.peak_breakdown[i].tensor_id, expected[i].second) << i;
  }
}

// Out-of-order memory events (the sort is skipped only for sorted streams) and the summary-only
// mode: without the timeline every other part of the profile is the same. The unsorted stream
// below replays as alloc a@1 (10), alloc b@2 (30), free a@3, so the peak is 40 at t=2 with both
// live, b first (bytes descending) — worked out by hand from the three events.
TEST(Memory, UnsortedStreamAndSummaryOnlyMode) {
  const TraceDocument doc = doc_of(R"(
{"kind":"span_start","id":"s1","name":"session","start_ns":0,"span_kind":"function","measured":true}
{"kind":"memory","timestamp_ns":3,"tensor_id":"a","span_id":"s1","device":"cpu","bytes":10,"action":"free","shape":[],"dtype":"f32"}
{"kind":"memory","timestamp_ns":2,"tensor_id":"b","span_id":"s1","device":"cpu","bytes":30,"action":"alloc","shape":[],"dtype":"f32"}
{"kind":"memory","timestamp_ns":1,"tensor_id":"a","span_id":"s1","device":"cpu","bytes":10,"action":"alloc","shape":[],"dtype":"f32"}
{"kind":"span_end","id":"s1","duration_ns":10}
)");
  const MemoryProfile full = analyze_memory(doc);
  EXPECT_EQ(full.summary.peak_bytes, 40u);
  EXPECT_EQ(full.summary.peak_timestamp_ns, 2u);
  ASSERT_EQ(full.timeline.size(), 3u);
  EXPECT_EQ(full.timeline[0].timestamp_ns, 1u);
  EXPECT_EQ(full.timeline[2].live_bytes, 30u);
  ASSERT_EQ(full.peak_breakdown.size(), 2u);
  EXPECT_EQ(full.peak_breakdown[0].tensor_id, "b");
  EXPECT_EQ(full.peak_breakdown[1].tensor_id, "a");

  const MemoryProfile lean = analyze_memory(doc, false);
  EXPECT_TRUE(lean.timeline.empty());
  EXPECT_EQ(lean.summary.peak_bytes, full.summary.peak_bytes);
  EXPECT_EQ(lean.summary.peak_timestamp_ns, full.summary.peak_timestamp_ns);
  EXPECT_EQ(lean.summary.peak_by_category, full.summary.peak_by_category);
  EXPECT_EQ(lean.summary.alloc_count, full.summary.alloc_count);
  EXPECT_EQ(lean.peak_breakdown.size(), full.peak_breakdown.size());
  EXPECT_EQ(lean.by_device.size(), full.by_device.size());

  // The summary alone (no timeline, no breakdown) is the full replay's summary.
  const MemorySummary alone = memory_summary(doc);
  EXPECT_EQ(alone.peak_bytes, 40u);
  EXPECT_EQ(alone.peak_timestamp_ns, full.summary.peak_timestamp_ns);
  EXPECT_EQ(alone.peak_device, full.summary.peak_device);
  EXPECT_EQ(alone.peak_span_id, full.summary.peak_span_id);
  EXPECT_EQ(alone.peak_by_category, full.summary.peak_by_category);
  EXPECT_EQ(alone.alloc_count, full.summary.alloc_count);
  EXPECT_EQ(alone.free_count, full.summary.free_count);
  EXPECT_EQ(alone.total_alloc_bytes, full.summary.total_alloc_bytes);
  EXPECT_EQ(alone.autograd_retained_bytes, full.summary.autograd_retained_bytes);
}
