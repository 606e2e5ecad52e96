// The Chrome Trace Event export (export/chrome_trace_writer.hpp).
// Every check re-reads the written JSON with nlohmann (not our writer) and compares it with the
// trace document it came from, or with rules of the trace-event format that a reader applies
// (strict nesting per track computed with ts + dur in doubles, as speedscope and the trace viewer
// do). The third-party reader test (speedscope in chromium) is viewer/tests/speedscope_test.mjs.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "candle_graph/analysis.hpp"
#include "candle_graph/trace.hpp"
#include "cli/cli_test_support.hpp"
#include "export/chrome_trace_writer.hpp"
#include "export/chrome_tracks.hpp"
#include "export/gzip_sink.hpp"
#include "support/kineto_reference.hpp"
#include "synth/synthetic_trace.hpp"

namespace {

using candle_graph::TraceDocument;
using nlohmann::json;
namespace ex = candle_graph::exporting;

std::string synth_text(std::uint64_t layers, std::uint64_t ops_per_span) {
  std::string text;
  candle_graph::synth::generate({layers, ops_per_span, 1},
                                [&](std::string_view piece) { text.append(piece); });
  return text;
}

std::string export_text(const TraceDocument& doc, ex::ChromeExportStats* stats = nullptr) {
  std::string out;
  const ex::ChromeExportStats s =
      ex::write_chrome_trace(doc, [&](std::string_view piece) { out.append(piece); });
  if (stats) *stats = s;
  return out;
}

std::vector<json> events_of(const json& doc, std::string_view ph) {
  std::vector<json> out;
  for (const json& e : doc.at("traceEvents"))
    if (e.at("ph") == ph) out.push_back(e);
  return out;
}

double end_of(const json& e) {
  return e.at("ts").get<double>() + e.at("dur").get<double>();
}

// Strict nesting per (pid, tid), the way a reader rebuilds the stack: sorted by ts, longer
// first at equal ts; every slice either lies inside the slice on top of the stack or starts at
// or after its end. Returns the number of misnested slices (speedscope's "Tried to end" lines).
int misnested(const std::vector<json>& xs) {
  std::map<std::pair<int, int>, std::vector<const json*>> by_track;
  for (const json& e : xs) by_track[{e.at("pid").get<int>(), e.at("tid").get<int>()}].push_back(&e);
  int bad = 0;
  for (auto& [track, list] : by_track) {
    std::stable_sort(list.begin(), list.end(), [](const json* a, const json* b) {
      if (a->at("ts").get<double>() != b->at("ts").get<double>())
        return a->at("ts").get<double>() < b->at("ts").get<double>();
      return a->at("dur").get<double>() > b->at("dur").get<double>();
    });
    std::vector<double> stack;  // ends
    for (const json* e : list) {
      const double ts = e->at("ts").get<double>(), end = end_of(*e);
      while (!stack.empty() && stack.back() <= ts) stack.pop_back();
      if (!stack.empty() && end > stack.back()) ++bad;
      stack.push_back(end);
    }
  }
  return bad;
}

// Each X slice with a parent on the same track lies inside it (µs, as a reader computes them).
void expect_children_inside_parents(const json& out) {
  std::map<std::string, const json*> span_by_id;
  const std::vector<json> xs = events_of(out, "X");
  for (const json& e : xs)
    if (e.at("cat") == "span") span_by_id[e.at("args").at("span_id")] = &e;
  int checked = 0;
  for (const json& e : xs) {
    const json& args = e.at("args");
    std::string parent;
    if (e.at("cat") == "op")
      parent = args.at("span_id");
    else if (args.contains("parent_id"))
      parent = args.at("parent_id");
    else
      continue;
    const json* p = span_by_id.at(parent);
    if (p->at("tid") != e.at("tid")) continue;
    ++checked;
    EXPECT_GE(e.at("ts").get<double>(), p->at("ts").get<double>()) << e.dump();
    EXPECT_LE(end_of(e), end_of(*p)) << e.dump() << "\nparent " << p->dump();
  }
  EXPECT_GT(checked, 0);
}

TEST(ChromeExport, SynthTraceReparsesWithEverySpanOpAndTheProvenance) {
  const TraceDocument doc = candle_graph::parse_trace_text(synth_text(12, 4), "synth.jsonl");
  ex::ChromeExportStats stats;
  const json out = json::parse(export_text(doc, &stats));

  // Provenance: the contract with `convert` (otherData keys and values from the meta event).
  const json& other = out.at("otherData");
  EXPECT_EQ(out.at("displayTimeUnit"), "ns");
  EXPECT_EQ(other.at("schema"), "candle-graph/chrome/1");
  EXPECT_EQ(other.at("trace_schema"), "candle-graph/trace/6");
  EXPECT_EQ(other.at("run_id"), "run-synth-1");
  EXPECT_EQ(other.at("correlation_id"), std::string(doc.run().correlation_id));
  EXPECT_EQ(other.at("entrypoint"), "synth::train::update");
  EXPECT_EQ(other.at("phase"), "train");
  EXPECT_EQ(other.at("capture_step"), 3);
  EXPECT_EQ(other.at("warmup_steps"), 2);
  EXPECT_EQ(other.at("device"), "cpu");
  EXPECT_EQ(other.at("timing_mode"), "host");
  EXPECT_EQ(other.at("tags").at("layers"), "12");

  // Every span and op exactly once, with its exact ns values in args.
  std::multiset<std::string> spans, ops;
  for (const json& e : events_of(out, "X")) {
    if (e.at("cat") == "span") spans.insert(e.at("args").at("span_id").get<std::string>());
    if (e.at("cat") == "op") ops.insert(e.at("name").get<std::string>());
  }
  EXPECT_EQ(spans.size(), doc.spans().size());
  EXPECT_EQ(ops.size(), doc.ops().size());
  EXPECT_EQ(stats.spans, doc.spans().size());
  for (const auto& s : doc.spans()) EXPECT_EQ(spans.count(std::string(s.id)), 1u) << s.id;
  for (const json& e : events_of(out, "X")) {
    if (e.at("cat") != "span") continue;
    const auto& s = doc.spans()[doc.find_span(e.at("args").at("span_id").get<std::string>())];
    EXPECT_EQ(e.at("name"), std::string(s.name));
    EXPECT_EQ(e.at("args").at("start_ns"), s.start_ns);
    EXPECT_EQ(e.at("args").at("duration_ns"), s.duration_ns);
    EXPECT_EQ(e.at("args").at("measured"), s.measured);
    // ts is start_ns / 1000 (synth spans nest, nothing is clamped).
    EXPECT_EQ(e.at("ts").get<double>(), static_cast<double>(s.start_ns) / 1000.0);
  }
  EXPECT_EQ(stats.clamped, 0u);
  EXPECT_EQ(misnested(events_of(out, "X")), 0);
  expect_children_inside_parents(out);
}

TEST(ChromeExport, CounterSamplesAreInTimeOrderAndEndAtTheReplayState) {
  const TraceDocument doc = candle_graph::parse_trace_text(synth_text(8, 3), "synth.jsonl");
  const json out = json::parse(export_text(doc));
  std::map<std::string, double> last;
  std::map<std::string, json> final_args;
  for (const json& e : events_of(out, "C")) {
    const std::string name = e.at("name");
    const double ts = e.at("ts");
    if (last.count(name)) {
      EXPECT_LE(last[name], ts) << name;
    }
    last[name] = ts;
    final_args[name] = e.at("args");
  }
  ASSERT_TRUE(final_args.count("live memory cpu"));
  ASSERT_TRUE(final_args.count("live memory cpu by category"));
  ASSERT_TRUE(final_args.count("device memory cpu"));
  // The last sample equals the memory profile's last timeline point (computed by the library's
  // own analyze_memory with the stored timeline, independent of the streaming path).
  const candle_graph::MemoryProfile profile = candle_graph::analyze_memory(doc);
  ASSERT_FALSE(profile.timeline.empty());
  EXPECT_EQ(final_args["live memory cpu"].at("bytes"), profile.timeline.back().live_bytes);
  // Samples: one per distinct instant of the timeline, for both counters.
  std::set<std::uint64_t> instants;
  for (const auto& p : profile.timeline) instants.insert(p.timestamp_ns);
  std::size_t live_samples = 0;
  for (const json& e : events_of(out, "C")) live_samples += e.at("name") == "live memory cpu";
  EXPECT_EQ(live_samples, instants.size());
  std::size_t device_samples = 0;
  for (const json& e : events_of(out, "C")) device_samples += e.at("name") == "device memory cpu";
  EXPECT_EQ(device_samples, doc.device_memory().size());
}

TEST(ChromeExport, DataFlowsFollowTheGraphDataEdgesAndPair) {
  const TraceDocument doc = candle_graph::parse_trace_text(synth_text(6, 4), "synth.jsonl");
  ex::ChromeExportStats stats;
  const json out = json::parse(export_text(doc, &stats));
  // Expected: graph/3 data edges (built by the graph stage) whose input tensor some op produced.
  const candle_graph::ExecutionGraph g = candle_graph::build_from_trace(doc);
  std::set<std::string> outputs;
  for (const auto& o : doc.ops())
    if (o.output) outputs.insert(std::string(*o.output));
  std::size_t expected = 0;
  for (std::uint32_t i = 0; i < g.edges.size(); ++i) {
    const auto v = g.edge(i);
    if (v.kind == candle_graph::GraphEdgeKind::data && outputs.count(v.from.str())) ++expected;
  }
  ASSERT_GT(expected, 0u);
  std::map<std::uint64_t, std::vector<json>> by_id;
  for (const json& e : out.at("traceEvents"))
    if (e.at("ph") == "s" || e.at("ph") == "f") by_id[e.at("id")].push_back(e);
  EXPECT_EQ(by_id.size(), expected);
  EXPECT_EQ(stats.data_flows, expected);
  // Each flow: one s then one f, same cat and name, f binds to its enclosing slice, and each
  // end's ts lies inside an op slice on its track.
  const std::vector<json> xs = events_of(out, "X");
  auto inside_op = [&](const json& f) {
    for (const json& x : xs)
      if (x.at("cat") == "op" && x.at("tid") == f.at("tid") && x.at("ts") <= f.at("ts") &&
          f.at("ts").get<double>() <= end_of(x))
        return true;
    return false;
  };
  for (const auto& [id, pair] : by_id) {
    ASSERT_EQ(pair.size(), 2u) << id;
    EXPECT_EQ(pair[0].at("ph"), "s");
    EXPECT_EQ(pair[1].at("ph"), "f");
    EXPECT_EQ(pair[1].at("bp"), "e");
    EXPECT_EQ(pair[0].at("cat"), "data");
    EXPECT_EQ(pair[0].at("cat"), pair[1].at("cat"));
    EXPECT_EQ(pair[0].at("name"), pair[1].at("name"));
    EXPECT_LE(pair[0].at("ts").get<double>(), pair[1].at("ts").get<double>());
    EXPECT_TRUE(inside_op(pair[0])) << pair[0].dump();
    EXPECT_TRUE(inside_op(pair[1])) << pair[1].dump();
  }
}

// A hand-written trace with overlapping siblings, a child outside its parent, an edge event and
// hostile strings.
// The export of a small trace given as text, re-read.
json export_of(std::string_view trace_text, ex::ChromeExportStats& stats) {
  return json::parse(export_text(candle_graph::parse_trace_text(trace_text, "t.jsonl"), &stats));
}

// The X slices by name (the small test traces name each slice once).
std::map<std::string, json> slices_by_name(const json& out) {
  std::map<std::string, json> x;
  for (const json& e : events_of(out, "X")) x[e.at("name")] = e;
  return x;
}

constexpr std::string_view kAwkward =
    R"({"kind":"meta","schema":"candle-graph/trace/6","run_id":"r\u0001\"x","correlation_id":"c","entrypoint":"e\n","phase":"infer","timestamp":"t","capture_step":0,"warmup_steps":0,"device":"cpu","measured_region_device_synchronized":false,"timing_mode":"host","tags":{}}
{"kind":"span_start","id":"root","name":"root","start_ns":0,"span_kind":"function","measured":true}
{"kind":"span_start","id":"a","parent_id":"root","name":"A\t\u001f\\","start_ns":1000,"span_kind":"function","measured":false}
{"kind":"span_start","id":"b","parent_id":"root","name":"B","start_ns":3000,"span_kind":"module","measured":false,"step":"forward"}
{"kind":"op","span_id":"a","op_name":"late_op","inputs":[],"output":"t1","shape":[2],"dtype":"f32","device":"cpu","duration_ns":2000,"timestamp_ns":4000}
{"kind":"op","span_id":"b","op_name":"consumer","inputs":["t1","t1"],"output":"t2","shape":[2],"dtype":"f32","device":"cpu","duration_ns":1000,"timestamp_ns":6000}
{"kind":"span_end","id":"a","duration_ns":4000}
{"kind":"span_end","id":"b","duration_ns":5000}
{"kind":"span_end","id":"root","duration_ns":10000}
{"kind":"edge","from_span":"a","to_span":"b","duration_ns":7}
)";

// The counters' names carry the device as the trace spells it, however awkward: a quote, a
// backslash, a control character and non-ASCII text survive the JSON escaping. The expected
// samples are read off the trace below by hand: an alloc of 64 activation bytes at 1 µs, then a
// free of them at 2 µs.
TEST(ChromeExport, CounterNamesCarryAnAwkwardDeviceNameIntact) {
  const std::string device = "cu\"da\\:0\x01\xc3\xa9";          // cu"da\:0, U+0001, é
  const std::string spelled = "cu\\\"da\\\\:0\\u0001\xc3\xa9";  // as a JSON string spells it
  std::string trace =
      R"({"kind":"meta","schema":"candle-graph/trace/6","run_id":"r","correlation_id":"c","entrypoint":"e","phase":"infer","timestamp":"t","capture_step":0,"warmup_steps":0,"device":"cpu","measured_region_device_synchronized":false,"timing_mode":"host","tags":{}}
{"kind":"span_start","id":"root","name":"root","start_ns":0,"span_kind":"function","measured":true}
)";
  for (const auto& [ts, action] : {std::pair{1000, "alloc"}, std::pair{2000, "free"}})
    trace += R"({"kind":"memory","timestamp_ns":)" + std::to_string(ts) +
             R"(,"tensor_id":"t1","span_id":"root","device":")" + spelled +
             R"(","bytes":64,"action":")" + action +
             R"(","shape":[16],"dtype":"f32","category":"activation"})" + "\n";
  trace += R"({"kind":"span_end","id":"root","duration_ns":3000})"
           "\n";
  ex::ChromeExportStats stats;
  const json out = export_of(trace, stats);
  std::vector<std::pair<double, std::uint64_t>> live, activation;
  for (const json& e : events_of(out, "C")) {
    if (e.at("name") == "live memory " + device)
      live.emplace_back(e.at("ts").get<double>(), e.at("args").at("bytes").get<std::uint64_t>());
    else if (e.at("name") == "live memory " + device + " by category")
      activation.emplace_back(e.at("ts").get<double>(),
                              e.at("args").at("activation").get<std::uint64_t>());
  }
  const std::vector<std::pair<double, std::uint64_t>> expected = {{1.0, 64}, {2.0, 0}};
  EXPECT_EQ(live, expected);
  EXPECT_EQ(activation, expected);
  EXPECT_EQ(stats.counter_samples, 4u);
}

TEST(ChromeExport, OverlappingSiblingsGetTheirOwnTrackAndChildrenAreClamped) {
  ex::ChromeExportStats stats;
  const json out = export_of(kAwkward, stats);
  std::map<std::string, json> x = slices_by_name(out);
  ASSERT_EQ(x.size(), 5u);  // nothing dropped
  // A [1000, 5000] and B [3000, 8000] overlap: B goes to track 2, A stays with root.
  EXPECT_EQ(x["root"].at("tid"), 1);
  EXPECT_EQ(x["A\t\x1f\\"].at("tid"), 1);
  EXPECT_EQ(x["B"].at("tid"), 2);
  EXPECT_EQ(x["consumer"].at("tid"), 2);
  // late_op [4000, 6000] is cut at A's end: [4.0, 5.0] µs; its args keep the exact values.
  EXPECT_EQ(x["late_op"].at("ts"), 4.0);
  EXPECT_EQ(x["late_op"].at("dur"), 1.0);
  EXPECT_EQ(x["late_op"].at("args").at("duration_ns"), 2000);
  EXPECT_EQ(stats.clamped, 1u);
  EXPECT_EQ(stats.tracks, 2u);
  EXPECT_EQ(x["B"].at("args").at("step"), "forward");
  EXPECT_EQ(x["B"].at("args").at("span_kind"), "module");
  EXPECT_FALSE(x["root"].at("args").contains("parent_id"));
  EXPECT_FALSE(x["root"].at("args").contains("step"));
  EXPECT_EQ(misnested(events_of(out, "X")), 0);
  expect_children_inside_parents(out);
  // Both tracks are named.
  std::set<int> named;
  for (const json& m : events_of(out, "M"))
    if (m.at("name") == "thread_name") named.insert(m.at("tid").get<int>());
  EXPECT_EQ(named, (std::set<int>{1, 2}));
  // Strings with control characters survive the round trip.
  EXPECT_EQ(out.at("otherData").at("run_id"), "r\x01\"x");
  EXPECT_EQ(out.at("otherData").at("entrypoint"), "e\n");
  // The edge a → b is one "edge" flow binding inside A and B (not at a child's position);
  // t1 → consumer is one data flow (the repeated input counts once).
  std::vector<json> flows;
  for (const json& e : out.at("traceEvents"))
    if (e.at("ph") == "s" || e.at("ph") == "f") flows.push_back(e);
  ASSERT_EQ(flows.size(), 4u);
  EXPECT_EQ(flows[0].at("cat"), "edge");
  EXPECT_EQ(flows[0].at("tid"), 1);
  EXPECT_EQ(flows[1].at("tid"), 2);
  EXPECT_EQ(flows[1].at("bp"), "e");
  // A's own track stretch before late_op: [1000, 4000) → bound in its middle, 2.5 µs.
  EXPECT_EQ(flows[0].at("ts"), 2.5);
  EXPECT_EQ(flows[2].at("cat"), "data");
  EXPECT_EQ(flows[2].at("name"), "t1");
}

// A trace of one root span holding ops of 1 µs at `timestamp_ns` (op name, inputs as JSON array
// text, output id or "" for none).
struct RootOp {
  std::string_view name, inputs, output;
  std::uint64_t timestamp_ns;
};
std::string trace_of_root_ops(std::initializer_list<RootOp> ops) {
  std::string text =
      R"({"kind":"meta","schema":"candle-graph/trace/6","run_id":"r","correlation_id":"c","entrypoint":"e","phase":"infer","timestamp":"t","capture_step":0,"warmup_steps":0,"device":"cpu","measured_region_device_synchronized":false,"timing_mode":"host","tags":{}})"
      "\n"
      R"({"kind":"span_start","id":"root","name":"root","start_ns":0,"span_kind":"function","measured":true})"
      "\n";
  for (const RootOp& op : ops) {
    text += R"({"kind":"op","span_id":"root","op_name":")" + std::string(op.name) +
            R"(","inputs":)" + std::string(op.inputs);
    if (!op.output.empty()) text += R"(,"output":")" + std::string(op.output) + "\"";
    text += R"(,"shape":[2],"dtype":"f32","device":"cpu","duration_ns":1000,"timestamp_ns":)" +
            std::to_string(op.timestamp_ns) + "}\n";
  }
  return text + R"({"kind":"span_end","id":"root","duration_ns":20000})" + "\n";
}

// A tensor id produced twice: its readers after the second producer read that one (graph/3's
// data edges join an input to the latest op before it with that output). An input no op produced
// has no flow, nor has an op without an output.
TEST(ChromeExport, DataFlowsStartAtTheLatestProducerOfEachInput) {
  ex::ChromeExportStats stats;
  const json out = export_of(trace_of_root_ops({{"first", "[]", "x", 1000},
                                                {"early_reader", R"(["x"])", "a", 3000},
                                                {"second", R"(["nobody_made_this"])", "x", 5000},
                                                {"late_reader", R"(["x","a"])", "b", 7000},
                                                {"no_output", R"(["b"])", "", 9000}}),
                             stats);
  std::map<std::string, json> x = slices_by_name(out);
  // The op slice a flow end's ts falls in (the ops here do not overlap).
  auto op_at = [&](const json& end) {
    for (const auto& [name, slice] : x)
      if (name != "root" && slice.at("ts") <= end.at("ts") &&
          end.at("ts").get<double>() <= end_of(slice))
        return name;
    return std::string("none");
  };
  std::map<std::uint64_t, std::vector<json>> by_id;
  for (const json& e : out.at("traceEvents"))
    if (e.at("ph") == "s" || e.at("ph") == "f") by_id[e.at("id")].push_back(e);
  std::multiset<std::string> flows;  // "producer > reader (tensor)"
  for (const auto& [id, pair] : by_id) {
    ASSERT_EQ(pair.size(), 2u) << id;
    flows.insert(op_at(pair[0]) + " > " + op_at(pair[1]) + " (" +
                 pair[0].at("name").get<std::string>() + ")");
  }
  // Read off the trace above by hand.
  const std::multiset<std::string> expected = {
      "first > early_reader (x)", "second > late_reader (x)", "early_reader > late_reader (a)"};
  EXPECT_EQ(flows, expected);
  EXPECT_EQ(stats.data_flows, expected.size());
}

// PyTorch's ops nest (aten::linear > aten::t, aten::addmm). An op wholly inside an earlier op of
// the same span nests in it on the same track; one that sticks out of it still gets a track of
// its own. Data flows bind where no nested op covers the op they belong to.
constexpr std::string_view kNestedOps =
    R"({"kind":"meta","schema":"candle-graph/trace/6","run_id":"r","correlation_id":"c","entrypoint":"e","phase":"infer","timestamp":"t","capture_step":0,"warmup_steps":0,"device":"cpu","measured_region_device_synchronized":false,"timing_mode":"host","tags":{}}
{"kind":"span_start","id":"root","name":"root","start_ns":0,"span_kind":"function","measured":true}
{"kind":"op","span_id":"root","op_name":"producer","inputs":[],"output":"x","shape":[2],"dtype":"f32","device":"cpu","duration_ns":500,"timestamp_ns":100}
{"kind":"op","span_id":"root","op_name":"linear","inputs":["x"],"output":"y","shape":[2],"dtype":"f32","device":"cpu","duration_ns":9000,"timestamp_ns":1000}
{"kind":"op","span_id":"root","op_name":"t","inputs":["x"],"output":"xt","shape":[2],"dtype":"f32","device":"cpu","duration_ns":1000,"timestamp_ns":1000}
{"kind":"op","span_id":"root","op_name":"transpose","inputs":["x"],"output":"xt2","shape":[2],"dtype":"f32","device":"cpu","duration_ns":500,"timestamp_ns":1200}
{"kind":"op","span_id":"root","op_name":"addmm","inputs":["xt"],"output":"z","shape":[2],"dtype":"f32","device":"cpu","duration_ns":4000,"timestamp_ns":5000}
{"kind":"op","span_id":"root","op_name":"sticks_out","inputs":[],"output":"w","shape":[2],"dtype":"f32","device":"cpu","duration_ns":3000,"timestamp_ns":8000}
{"kind":"op","span_id":"root","op_name":"consumer","inputs":["y"],"output":"v","shape":[2],"dtype":"f32","device":"cpu","duration_ns":1000,"timestamp_ns":12000}
{"kind":"span_end","id":"root","duration_ns":20000}
)";

TEST(ChromeExport, OpsInsideOpsNestOnTheSameTrack) {
  ex::ChromeExportStats stats;
  const json out = export_of(kNestedOps, stats);
  std::map<std::string, json> x = slices_by_name(out);
  ASSERT_EQ(x.size(), 8u);
  // linear [1000, 10000] holds t [1000, 2000] (which holds transpose) and addmm [5000, 9000];
  // sticks_out [8000, 11000] overlaps addmm and ends after linear: its own track.
  for (const char* name : {"root", "producer", "linear", "t", "transpose", "addmm", "consumer"})
    EXPECT_EQ(x[name].at("tid"), 1) << name;
  EXPECT_EQ(x["sticks_out"].at("tid"), 2);
  EXPECT_EQ(stats.overflowed, 1u);
  EXPECT_EQ(stats.tracks, 2u);
  EXPECT_EQ(misnested(events_of(out, "X")), 0);
  // Flows (data edges by tensor id): x → linear, x → t, x → transpose, xt → addmm, y → consumer.
  std::map<std::string, std::vector<double>> flow_ts;  // name → [s ts, f ts]
  for (const json& e : out.at("traceEvents"))
    if (e.at("ph") == "s" || e.at("ph") == "f") flow_ts[e.at("name")].push_back(e.at("ts"));
  ASSERT_EQ(flow_ts["y"].size(), 2u);
  // linear's first stretch that t and addmm leave free is [2000, 5000): bound at 3.5 µs, where
  // a reader finds linear itself as the innermost slice (its middle, 5.5, is inside addmm).
  EXPECT_EQ(flow_ts["y"][0], 3.5);
  EXPECT_EQ(flow_ts["y"][1], 12.5);  // consumer: nothing nests in it, its middle
  // t is covered from 1000 to 1700 by transpose ([1200, 1700]): its first gap is [1000, 1200).
  ASSERT_EQ(flow_ts["xt"].size(), 2u);
  EXPECT_EQ(flow_ts["xt"][0], 1.1);
  EXPECT_EQ(flow_ts["x"].size(), 6u);  // three consumers of x
}

TEST(ChromeExport, MicrosecondsNeverMisnestAfterRounding) {
  // Large absolute timestamps (epoch ns) lose sub-µs digits in a double; children that end where
  // their parent ends must still end no later than it, as a reader computes ts + dur.
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t base = 1'700'000'000'000'000'000ull + rng() % 1'000'000'000'000ull;
    const std::uint64_t len = rng() % 5'000'000;
    const std::uint64_t cut = rng() % (len + 1);
    double pts, pdur, cts, cdur;
    ex::to_microseconds(base, base + len, pts, pdur);
    ex::to_microseconds(base + cut, base + len, cts, cdur);
    ASSERT_LE(cts + cdur, pts + pdur) << base << " " << len << " " << cut;
    ASSERT_GE(cts, pts);
    ASSERT_EQ(pts + pdur, static_cast<double>(base + len) / 1000.0);
    ASSERT_GE(pdur, 0.0);
  }
  // When ns / 1000 adds up exactly, it is what is written (the short text).
  double ts, dur;
  ex::to_microseconds(1500, 4000, ts, dur);
  EXPECT_EQ(ts, 1.5);
  EXPECT_EQ(dur, 2.5);
  // 2.607 + 1.643552e3 is not 1646.159 in doubles: dur is adjusted so that the sum is.
  ex::to_microseconds(2607, 2607 + 1643552, ts, dur);
  EXPECT_EQ(ts + dur, 1646.159);
  EXPECT_NEAR(dur, 1643.552, 1e-9);
}

TEST(ChromeExport, OutputIsStreamedInBoundedPieces) {
  const TraceDocument doc = candle_graph::parse_trace_text(synth_text(600, 4), "synth.jsonl");
  std::size_t largest = 0, total = 0, pieces = 0;
  ex::write_chrome_trace(doc, [&](std::string_view piece) {
    largest = std::max(largest, piece.size());
    total += piece.size();
    ++pieces;
  });
  EXPECT_GT(total, std::size_t{3} << 20);
  EXPECT_GT(pieces, 2u);
  EXPECT_LT(largest, (std::size_t{1} << 20) + (64 << 10));
}

TEST(ChromeExport, GzipSinkWritesAGzipOfTheSameText) {
  const TraceDocument doc = candle_graph::parse_trace_text(synth_text(50, 4), "synth.jsonl");
  const std::string plain = export_text(doc);
  std::string gz;
  ex::GzipSink zip([&](std::string_view piece) { gz.append(piece); });
  ex::write_chrome_trace(doc, [&](std::string_view piece) { zip.write(piece); });
  zip.finish();
  ASSERT_GT(gz.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(gz[1]), 0x8b);
  EXPECT_LT(gz.size(), plain.size() / 4);
  EXPECT_EQ(cgtest::inflate_gzip(gz), plain);
}

// The compressor reads each piece only during its write: the caller reuses the piece's buffer at
// once (as the export's writer does), so a compressor that kept pointing into it for its history
// would turn later matches into garbage. Repetitive text of several MB, written through one
// buffer overwritten after every write, must come back whole through zlib's inflate.
TEST(ChromeExport, GzipSinkCopesWithTheCallerReusingItsBuffer) {
  std::string expected;
  std::string gz;
  ex::GzipSink zip([&](std::string_view piece) { gz.append(piece); });
  std::string buffer;
  for (int i = 0; i < 60000; ++i) {
    buffer = "{\"ph\":\"X\",\"name\":\"op" + std::to_string(i % 97) +
             "\",\"ts\":" + std::to_string(i * 7) + "},\n";
    expected += buffer;
    zip.write(buffer);
    std::fill(buffer.begin(), buffer.end(), '#');
  }
  zip.finish();
  EXPECT_GT(expected.size(), std::size_t{2} << 20);
  EXPECT_LT(gz.size(), expected.size() / 4);
  EXPECT_EQ(cgtest::inflate_gzip(gz), expected);
}

// The same text gives the same gzip file however it is cut into writes: the export's pieces are
// cut where its threads hand them over, which differs from run to run and with -j. The text is
// written whole, in pieces of random sizes (a fixed seed), and a byte at a time at first; every
// file must be byte for byte the one from the whole text, and inflate back to it (zlib).
TEST(ChromeExport, GzipOutputDoesNotDependOnHowTheTextIsCut) {
  const std::string text =
      export_text(candle_graph::parse_trace_text(synth_text(400, 4), "synth.jsonl"));
  ASSERT_GT(text.size(), std::size_t{1} << 20);
  const auto compress = [&](const std::function<std::size_t(std::size_t)>& piece_size) {
    std::string gz;
    ex::GzipSink zip([&](std::string_view piece) { gz.append(piece); });
    for (std::size_t at = 0, i = 0; at < text.size(); ++i) {
      const std::size_t n = std::min(piece_size(i), text.size() - at);
      zip.write(std::string_view(text).substr(at, n));
      at += n;
    }
    zip.finish();
    return gz;
  };
  const std::string whole = compress([&](std::size_t) { return text.size(); });
  EXPECT_EQ(cgtest::inflate_gzip(whole), text);
  std::mt19937_64 rng(26);
  std::uniform_int_distribution<std::size_t> sizes(1, 300'000);
  EXPECT_EQ(compress([&](std::size_t) { return sizes(rng); }), whole);
  EXPECT_EQ(compress([&](std::size_t i) { return i < 100'000 ? 1 : 1'000'003; }), whole);
}

// ---- the CLI ----------------------------------------------------------------------------------

TEST(ExportChromeCli, WritesJsonAndGzipAtomically) {
  cgcli::TempDir dir;
  const auto trace = dir.write("t.jsonl", synth_text(5, 2));
  const auto r = cgcli::run_cli(
      {"export", trace.string(), "--format", "chrome", "-o", (dir / "t.json").string()});
  ASSERT_EQ(r.exit_code, 0) << cgcli::describe(r);
  EXPECT_NE(r.err.find("spans and"), std::string::npos);
  const json out = json::parse(cgcli::read_file(dir / "t.json"));
  EXPECT_EQ(out.at("otherData").at("schema"), "candle-graph/chrome/1");
  const auto rz = cgcli::run_cli(
      {"export", trace.string(), "--format", "chrome", "-o", (dir / "t.json.gz").string()});
  ASSERT_EQ(rz.exit_code, 0) << cgcli::describe(rz);
  EXPECT_EQ(cgtest::inflate_gzip(cgcli::read_file(dir / "t.json.gz")),
            cgcli::read_file(dir / "t.json"));
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"t.json", "t.json.gz", "t.jsonl"}));
}

TEST(ExportChromeCli, UsageAndInputErrors) {
  cgcli::TempDir dir;
  const auto trace = dir.write("t.jsonl", synth_text(2, 2));
  auto two = cgcli::run_cli({"export", trace.string(), trace.string(), "--format", "chrome", "-o",
                             (dir / "o.json").string()});
  EXPECT_EQ(two.exit_code, 2) << cgcli::describe(two);
  EXPECT_NE(two.err.find("exactly one trace"), std::string::npos) << two.err;
  auto over =
      cgcli::run_cli({"export", trace.string(), "--format", "chrome", "-o", trace.string()});
  EXPECT_EQ(over.exit_code, 2) << cgcli::describe(over);
  // Untrusted: a child span that names a parent that does not exist.
  const auto bad = dir.write(
      "bad.jsonl",
      std::string(kAwkward.substr(0, kAwkward.find('\n') + 1)) +
          R"({"kind":"span_start","id":"x","parent_id":"nope","name":"x","start_ns":0,"span_kind":"function","measured":true})"
          "\n"
          R"({"kind":"span_end","id":"x","duration_ns":5})"
          "\n");
  auto untrusted = cgcli::run_cli(
      {"export", bad.string(), "--format", "chrome", "-o", (dir / "o.json").string()});
  EXPECT_EQ(untrusted.exit_code, 1) << cgcli::describe(untrusted);
  EXPECT_NE(untrusted.err.find("bad.jsonl"), std::string::npos) << untrusted.err;
  auto malformed = cgcli::run_cli({"export", dir.write("m.jsonl", "{\"kind\":\n").string(),
                                   "--format", "chrome", "-o", (dir / "o.json").string()});
  EXPECT_EQ(malformed.exit_code, 1) << cgcli::describe(malformed);
  EXPECT_NE(malformed.err.find("m.jsonl:1"), std::string::npos) << malformed.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "o.json"));
}

}  // namespace
