// project() (trace6.md §12.1 with the viewer fixes of compatibility.md): the compact viewer/4
// payload with sorted keys and the added `payload_limits` object.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>

#include "evidence/evidence_packet.hpp"
#include "viewer/html_document.hpp"
#include "viewer/viewer_payload.hpp"
#include "viewer_test_helpers.hpp"

using namespace candle_graph;
using Json = nlohmann::ordered_json;  // keeps the written key order, so sorting can be checked

namespace {

struct Packet {
  std::string text;
  TraceDocument doc;
  evidence::EvidencePacket packet;
  explicit Packet(std::string t)
      : text(std::move(t)),
        doc(parse_trace_text(text)),
        packet(evidence::make_evidence_packet(
            doc, import::nsight::load_optional(std::nullopt, evidence::expected_semantic_keys(doc)),
            std::nullopt)) {}
};

// Keys strictly increasing in byte order at every level (trace6.md §9.5: serde's sorted maps).
void expect_sorted_keys(const Json& j, const std::string& path) {
  if (j.is_object()) {
    const std::string* prev = nullptr;
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (prev) {
        EXPECT_LT(*prev, it.key()) << "at " << path;
      }
      prev = &it.key();
      expect_sorted_keys(it.value(), path + "/" + it.key());
    }
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i)
      expect_sorted_keys(j[i], path + "/" + std::to_string(i));
  }
}

viewer::PayloadLimits small_limits_with_breakdown() {
  viewer::PayloadLimits l;
  l.full_detail_nodes = 20;
  l.top_spans = 3;
  l.top_ops = 4;
  l.memory_buckets = 5;
  l.peak_breakdown_rows = 3;
  return l;
}

}  // namespace

TEST(ViewerPayload, SchemaSortedKeysAndCompactText) {
  const Packet p(cg_viewer_test::read_fixture("spec_example.jsonl"));
  const std::string text = viewer::project(p.packet);
  EXPECT_EQ(text.find('\n'), std::string::npos);
  EXPECT_EQ(text.find("\": "), std::string::npos);  // no pretty separators
  const Json j = Json::parse(text);
  EXPECT_EQ(j["schema"], "candle-graph/viewer/4");
  EXPECT_EQ(j["default_view"], "evidence");
  expect_sorted_keys(j, "");
  // trace6.md §12.1's top level plus the added payload_limits; views as listed there.
  std::vector<std::string> keys, views;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  for (auto it = j["views"].begin(); it != j["views"].end(); ++it) views.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"default_view", "gradients", "payload_limits", "schema",
                                            "span_tree", "summary", "views"}));
  // Added: kernels and operators (the Operators and Kernels views), device_work (the timeline's
  // stream lanes) and overview, present even when empty.
  EXPECT_EQ(views, (std::vector<std::string>{"device_work", "evidence", "gpu", "kernels", "memory",
                                             "operators", "overview", "span_costs", "trace"}));
  // No device work: no Overview to open on, no lanes.
  EXPECT_TRUE(j["views"]["overview"]["devices"].empty());
  EXPECT_TRUE(j["views"]["device_work"]["lanes"].empty());
}

TEST(ViewerPayload, SmallTraceIsKeptWholeAndSaysSo) {
  // Counts read off tests/fixtures/spec_example.jsonl by hand: 5 span_start and 2 op lines
  // (7 nodes), 4 memory events, 1 tensor, 1 gradient (present). Live at the global peak
  // (t = 8 ms): h (alloc 5.5 ms, freed 9 ms) and g_w (alloc 8 ms) → 2 breakdown rows.
  const Packet p(cg_viewer_test::read_fixture("spec_example.jsonl"));
  const Json j = Json::parse(viewer::project(p.packet));
  // Two op names (matmul, sgd_update), no device work.
  const Json expected = Json::parse(R"({"device_work_kept":0,"device_work_total":0,
      "gradients_attention":0,"gradients_total":1,
      "kernel_rows_total":0,"memory_points_dropped":0,"memory_points_total":4,"nodes_kept":7,
      "nodes_total":7,"operator_rows_total":2,"ops_folded":0,"peak_breakdown_total":2,
      "spans_folded":0,"tensors_total":1})");
  EXPECT_EQ(j["payload_limits"], expected);
  EXPECT_EQ(j["views"]["trace"]["nodes"].size(), 7u);
  EXPECT_EQ(j["views"]["span_costs"]["items"].size(), 7u);
  EXPECT_EQ(j["views"]["memory"]["timeline"].size(), 4u);
  EXPECT_EQ(j["span_tree"].size(), 5u);
  for (const Json& n : j["views"]["trace"]["nodes"]) EXPECT_FALSE(n.contains("aggregated"));

  // memory_ratio = node peak ÷ largest node peak (compatibility fix). Peaks from trace6.md §8.3 as
  // checked in tests/evidence/spec_example_test.cpp: s1 8192, s3 2048 → 1 and 0.25.
  for (const Json& n : j["views"]["trace"]["nodes"]) {
    if (n["id"] == "s1") {
      EXPECT_EQ(n["memory_ratio"].get<double>(), 1.0);
    }
    if (n["id"] == "s3") {
      EXPECT_EQ(n["memory_ratio"].get<double>(), 0.25);
    }
  }
}

TEST(ViewerPayload, BoundedPayloadAccountsForEveryFoldedNode) {
  const Packet p(cg_viewer_test::synth_text(12, 6, 2));
  const viewer::PayloadLimits limits = small_limits_with_breakdown();
  const Json j = Json::parse(viewer::project(p.packet, limits));
  expect_sorted_keys(j, "");
  const Json& lim = j["payload_limits"];
  const Json& nodes = j["views"]["trace"]["nodes"];

  // Totals from the document itself.
  const std::uint64_t spans = p.doc.spans().size(), ops = p.doc.ops().size();
  EXPECT_EQ(lim["nodes_total"], spans + ops);
  EXPECT_EQ(lim["memory_points_total"], p.doc.memory().size());
  EXPECT_EQ(lim["tensors_total"], p.doc.tensors().size());
  EXPECT_EQ(lim["gradients_total"], p.doc.gradients().size());
  std::uint64_t attention = 0;
  for (const GradientEvent& g : p.doc.gradients()) attention += g.state != GradientState::present;
  EXPECT_EQ(lim["gradients_attention"], attention);

  // Kept + folded = total, and the folds are where the nodes say.
  const std::uint64_t kept = lim["nodes_kept"];
  EXPECT_LT(kept, spans + ops);
  EXPECT_EQ(nodes.size(), kept);
  EXPECT_EQ(j["views"]["span_costs"]["items"].size(), kept);
  EXPECT_EQ(
      kept + lim["spans_folded"].get<std::uint64_t>() + lim["ops_folded"].get<std::uint64_t>(),
      spans + ops);
  std::uint64_t agg_spans = 0, agg_ops = 0, self_ns = 0, non_op = 0;
  std::set<std::string> ids;
  for (const Json& n : nodes) {
    ids.insert(n["id"].get<std::string>());
    self_ns += n["self_time_ns"].get<std::uint64_t>();
    non_op += n["kind"] != "op";
    if (!n.contains("aggregated")) continue;
    agg_spans += n["aggregated"]["spans"].get<std::uint64_t>();
    agg_ops += n["aggregated"]["ops"].get<std::uint64_t>();
    self_ns += n["aggregated"]["self_time_ns"].get<std::uint64_t>();
  }
  EXPECT_EQ(agg_spans, lim["spans_folded"]);
  EXPECT_EQ(agg_ops, lim["ops_folded"]);
  EXPECT_GT(agg_spans + agg_ops, 0u);
  // Self time is conserved: kept self time plus folded self time = all nodes' self time.
  std::uint64_t all_self = 0;
  for (const GraphNode& n : p.packet.graph.nodes) all_self += n.self_time_ns;
  EXPECT_EQ(self_ns, all_self);
  EXPECT_EQ(j["span_tree"].size(), non_op);

  // The kept nodes form a tree: parents and call-edge endpoints are kept nodes.
  for (const Json& n : nodes) {
    if (!n["parent_id"].is_null()) {
      EXPECT_TRUE(ids.count(n["parent_id"])) << n["id"];
    }
  }
  for (const Json& e : j["views"]["trace"]["edges"]) {
    if (e["kind"] != "call") continue;
    EXPECT_TRUE(ids.count(e["from"])) << e["id"];
    EXPECT_TRUE(ids.count(e["to"])) << e["id"];
  }

  // Memory points: what was dropped is what is missing.
  EXPECT_EQ(j["views"]["memory"]["timeline"].size(),
            lim["memory_points_total"].get<std::uint64_t>() -
                lim["memory_points_dropped"].get<std::uint64_t>());
  EXPECT_GT(lim["memory_points_dropped"].get<std::uint64_t>(), 0u);
  EXPECT_LE(j["views"]["memory"]["peak_breakdown"].size(), limits.peak_breakdown_rows);

  // Gradient states use the one spelling `non_finite` (compatibility fix); the synthetic trace
  // has gradients in every state.
  std::set<std::string> states;
  for (const Json& g : j["gradients"]) states.insert(g["state"].get<std::string>());
  EXPECT_TRUE(states.count("non_finite"));
  EXPECT_FALSE(states.count("nonfinite"));
}

TEST(ViewerPayload, HostileNamesSurviveThePageUnchanged) {
  // An op name with a closing tag, a comment opener and U+2028 (written as \u2028 in the trace).
  std::string text = cg_viewer_test::read_fixture("spec_example.jsonl");
  const std::string from = R"("op_name":"matmul","inputs")";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), R"("op_name":"mat</script><!--mul\u2028x","inputs")");
  const Packet p(text);
  const std::string payload = viewer::project(p.packet);
  const std::string page =
      viewer::render_evidence_html(payload, cg_viewer_test::hand_made_assets());
  EXPECT_EQ(cg_viewer_test::count_ci(page, "</script"), 2u);
  const Json back =
      Json::parse(cg_viewer_test::between(page, "type=\"application/json\">", "</script>"));
  EXPECT_EQ(back, Json::parse(payload));
  bool found = false;
  for (const Json& n : back["views"]["trace"]["nodes"])
    found |= n["label"] == "mat</script><!--mul\xE2\x80\xA8x";
  EXPECT_TRUE(found);
}

namespace {

// Every string value of `j` (keys aside), depth first.
void each_string(const Json& j, const std::function<void(const std::string&)>& f) {
  if (j.is_string()) f(j.get_ref<const std::string&>());
  if (j.is_object() || j.is_array())
    for (const Json& v : j) each_string(v, f);
}

}  // namespace

// Strings longer than 16 KiB are cut on the page (a 50 MB name, written a dozen times, made a
// 630 MB page): two spans whose 20 KiB ids differ only at their end, with 100 KiB names. The ids
// and every reference to them must stay consistent and distinct.
TEST(ViewerPayload, LongStringsAreCutAndIdsStayDistinct) {
  constexpr std::size_t kPage = std::size_t{16} << 10;
  const std::string stem(20 << 10, 'i');
  const std::string a = stem + "-a", b = stem + "-b", name(100 << 10, 'n');
  std::string text = cg_viewer_test::read_fixture("spec_example.jsonl");
  // The fixture's spans s3 and s4 take the long ids (every reference to them too) and s3 the
  // long name.
  const auto replace_all = [&](const std::string& from, const std::string& to) {
    for (std::size_t at = text.find(from); at != std::string::npos;
         at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
  };
  replace_all(R"("s3")", "\"" + a + "\"");
  replace_all(R"("s4")", "\"" + b + "\"");
  replace_all(R"("name":"demo/update-000000000001/forward")", R"("name":")" + name + "\"");
  const Packet p(text);
  ASSERT_NE(p.doc.find_span(a), kNoIndex);
  ASSERT_NE(p.doc.find_span(b), kNoIndex);
  ASSERT_EQ(p.doc.spans()[p.doc.find_span(a)].name, name);
  const Json j = Json::parse(viewer::project(p.packet));
  std::size_t cut = 0;
  each_string(j, [&](const std::string& v) {
    EXPECT_LE(v.size(), kPage);
    cut += v.find("bytes, sha256 ") != std::string::npos ? 1 : 0;
  });
  EXPECT_GT(cut, 0u);
  std::set<std::string> ids;
  for (const Json& n : j["views"]["trace"]["nodes"]) ids.insert(n["id"].get<std::string>());
  EXPECT_EQ(ids.size(), j["views"]["trace"]["nodes"].size()) << "two ids became one";
  for (const Json& n : j["views"]["trace"]["nodes"]) {
    if (!n["parent_id"].is_null()) {
      EXPECT_TRUE(ids.count(n["parent_id"].get<std::string>())) << n["id"];
    }
  }
  // A short name is left whole.
  bool short_kept = false;
  for (const Json& n : j["views"]["trace"]["nodes"]) short_kept |= n["label"] == "matmul";
  EXPECT_TRUE(short_kept);
}

// tests/fixtures/device_work.jsonl, worked out by hand (trace6.md §4.5.1): on thread 1,
// aten::linear [1, 5) ms encloses aten::mm [1.5, 3.5) ms, which encloses the runtime call
// cudaLaunchKernel [2, 2.1) ms with correlation 7; kernel _Z4gemmv (correlation 7) runs 1 ms on
// cuda:0; a 0.5 ms memcpy has correlation 99, which no runtime call has. So: linear self 2 ms,
// total 4 ms, device self 0, device total 1 ms; mm self 1.9 ms, total 2 ms, device 1 ms both;
// the launch 0.1 ms and no device time; 1.5 ms of device work, 0.5 ms of it unattributed.
TEST(ViewerPayload, OperatorsAndKernelsAreTheTablesOfTheTrace) {
  const Packet p(cg_viewer_test::read_fixture("device_work.jsonl"));
  const Json j = Json::parse(viewer::project(p.packet));
  expect_sorted_keys(j, "");
  const Json ops = Json::parse(R"({"device_ns":1500000,"host_self_ns":4000000,"items":[
      {"calls":1,"device_self_ns":0,"device_total_ns":1000000,"host_self_ns":2000000,
       "host_total_ns":4000000,"name":"aten::linear"},
      {"calls":1,"device_self_ns":1000000,"device_total_ns":1000000,"host_self_ns":1900000,
       "host_total_ns":2000000,"name":"aten::mm"},
      {"calls":1,"device_self_ns":0,"device_total_ns":0,"host_self_ns":100000,
       "host_total_ns":100000,"name":"cudaLaunchKernel"}],"unattributed_device_ns":500000})");
  EXPECT_EQ(j["views"]["operators"], ops);
  // Demangled by c++filt: `echo _Z4gemmv | c++filt` prints gemm().
  // R"J(: the name gemm() holds the default raw-string terminator.
  const Json kernels = Json::parse(R"J({"device_ns":1500000,"items":[
      {"calls":1,"device":"cuda:0","kind":"kernel","max_ns":1000000,"mean_ns":1000000,"min_ns":1000000,
       "name":"gemm()","raw_name":"_Z4gemmv","total_ns":1000000},
      {"calls":1,"device":"cuda:0","kind":"memcpy","max_ns":500000,"mean_ns":500000,"min_ns":500000,
       "name":"Memcpy HtoD (Pageable -> Device)","raw_name":"Memcpy HtoD (Pageable -> Device)",
       "total_ns":500000}]})J");
  EXPECT_EQ(j["views"]["kernels"], kernels);
  EXPECT_EQ(j["payload_limits"]["operator_rows_total"], 3);
  EXPECT_EQ(j["payload_limits"]["kernel_rows_total"], 2);
}

TEST(ViewerPayload, TablesAreBoundedAndKeepTheirTotals) {
  const Packet p(cg_viewer_test::read_fixture("device_work.jsonl"));
  viewer::PayloadLimits limits;
  limits.table_rows = 1;
  const Json j = Json::parse(viewer::project(p.packet, limits));
  // One row: the device half of the bound (rounded up) goes first, so aten::mm, the only op with
  // device self time, is kept over aten::linear, the first by host self time.
  ASSERT_EQ(j["views"]["operators"]["items"].size(), 1u);
  EXPECT_EQ(j["views"]["operators"]["items"][0]["name"], "aten::mm");
  ASSERT_EQ(j["views"]["kernels"]["items"].size(), 1u);
  EXPECT_EQ(j["views"]["kernels"]["items"][0]["raw_name"], "_Z4gemmv");
  // The totals and the sums stay those of the whole trace.
  EXPECT_EQ(j["payload_limits"]["operator_rows_total"], 3);
  EXPECT_EQ(j["payload_limits"]["kernel_rows_total"], 2);
  EXPECT_EQ(j["views"]["operators"]["host_self_ns"], 4000000);
  EXPECT_EQ(j["views"]["operators"]["device_ns"], 1500000);
  EXPECT_EQ(j["views"]["kernels"]["device_ns"], 1500000);

  limits.table_rows = 2;  // one by device (mm), one by host self (linear), in host-self order
  const Json two = Json::parse(viewer::project(p.packet, limits));
  ASSERT_EQ(two["views"]["operators"]["items"].size(), 2u);
  EXPECT_EQ(two["views"]["operators"]["items"][0]["name"], "aten::linear");
  EXPECT_EQ(two["views"]["operators"]["items"][1]["name"], "aten::mm");
}

TEST(ViewerPayload, HostileOpAndKernelNamesSurviveUnchanged) {
  std::string text = cg_viewer_test::read_fixture("device_work.jsonl");
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{R"("op_name":"aten::mm")",
                                            R"("op_name":"<img src=x onerror=alert(1)>")"},
        {R"("op_name":"_Z4gemmv")", R"("op_name":"</script><b>k")"}}) {
    ASSERT_NE(text.find(from), std::string::npos);
    text.replace(text.find(from), from.size(), to);
  }
  const Packet p(text);
  const std::string payload = viewer::project(p.packet);
  const std::string page =
      viewer::render_evidence_html(payload, cg_viewer_test::hand_made_assets());
  EXPECT_EQ(cg_viewer_test::count_ci(page, "</script"), 2u);
  const Json back =
      Json::parse(cg_viewer_test::between(page, "type=\"application/json\">", "</script>"));
  EXPECT_EQ(back["views"]["operators"]["items"][1]["name"], "<img src=x onerror=alert(1)>");
  EXPECT_EQ(back["views"]["kernels"]["items"][0]["name"], "</script><b>k");
  EXPECT_EQ(back["views"]["device_work"]["names"][0], "</script><b>k");
}

// tests/fixtures/device_work.jsonl by hand (see OperatorsAndKernelsAreTheTablesOfTheTrace): the
// measured step is [0, 10) ms; on cuda:0 stream 7 the kernel runs [2.2, 3.2) ms, the memcpy
// [6, 6.5) ms. Busy 1.5 ms: compute 1 ms, memory alone 0.5 ms, no communication. The window
// [2.2, 6.5) ms is 4.3 ms, so 2.8 ms idle, one gap before the memcpy, which no runtime call
// launched and which is over 30 µs: "other" (pytorch.md §G4). Host only = 10 − 4.3 = 5.7 ms.
TEST(ViewerPayload, OverviewSplitsTheStepIntoPartsThatAddUp) {
  const Packet p(cg_viewer_test::read_fixture("device_work.jsonl"));
  const Json j = Json::parse(viewer::project(p.packet));
  expect_sorted_keys(j, "");
  EXPECT_EQ(j["default_view"], "overview");  // device work: the page opens on the Overview
  const Json& o = j["views"]["overview"];
  EXPECT_EQ(o["step_begin_ns"], 0);
  EXPECT_EQ(o["step_ns"], 10'000'000);
  ASSERT_EQ(o["devices"].size(), 1u);
  const Json& d = o["devices"][0];
  EXPECT_EQ(d["device"], "cuda:0");
  const std::vector<std::pair<std::string, std::uint64_t>> parts = {
      {"compute_ns", 1'000'000},  {"communication_exposed_ns", 0}, {"memory_exposed_ns", 500'000},
      {"idle_host_wait_ns", 0},   {"idle_kernel_wait_ns", 0},      {"idle_other_ns", 2'800'000},
      {"host_only_ns", 5'700'000}};
  std::uint64_t sum = 0;
  for (const auto& [key, ns] : parts) {
    EXPECT_EQ(d[key], ns) << key;
    sum += d[key].get<std::uint64_t>();
  }
  // The identity the Overview states: the parts add up to the total, here the step.
  EXPECT_EQ(sum, d["total_ns"]);
  EXPECT_EQ(d["total_ns"], 10'000'000);
  EXPECT_EQ(d["window_ns"], 4'300'000);
  EXPECT_EQ(d["window_begin_ns"], 2'200'000);
  EXPECT_EQ(d["launches"]["count"], 1);  // the kernel; the memcpy has no launch call
  // The kernel starts 0.1 ms after its launch call ends ([2, 2.1) ms): the only delay.
  EXPECT_EQ(d["launches"]["p50_delay_ns"], 100'000);
  // The device is idle 65 % of its window: the idle finding of the packet, and only it.
  ASSERT_EQ(o["findings"].size(), 1u);
  EXPECT_EQ(o["findings"][0].get<std::string>().rfind("GPU cuda:0 idle 65.1%", 0), 0u)
      << o["findings"][0];
  EXPECT_NE(std::find(p.packet.findings.begin(), p.packet.findings.end(), o["findings"][0]),
            p.packet.findings.end());
}

// The same trace's device work as the timeline draws it: one lane, both items in start order with
// their device time, the kernel linked to its launch call's node, the memcpy to none.
TEST(ViewerPayload, DeviceWorkIsOneLanePerStreamWithItsLaunches) {
  const Packet p(cg_viewer_test::read_fixture("device_work.jsonl"));
  const Json j = Json::parse(viewer::project(p.packet));
  const Json& w = j["views"]["device_work"];
  EXPECT_EQ(w["lanes"], Json::parse(R"([{"device":"cuda:0","stream":7,"total":2}])"));
  EXPECT_EQ(w["kinds"], Json::parse(R"(["communication","kernel","memcpy","memset","sync"])"));
  // Demangled as the Kernels view shows it (`echo _Z4gemmv | c++filt` prints gemm()).
  EXPECT_EQ(w["names"], Json::parse(R"J(["gemm()","Memcpy HtoD (Pageable -> Device)"])J"));
  const Json& items = w["items"];
  EXPECT_EQ(items["lane"], Json::parse("[0,0]"));
  EXPECT_EQ(items["start_ns"], Json::parse("[2200000,6000000]"));
  EXPECT_EQ(items["duration_ns"], Json::parse("[1000000,500000]"));
  EXPECT_EQ(items["kind"], Json::parse("[1,2]"));
  EXPECT_EQ(items["name"], Json::parse("[0,1]"));
  ASSERT_EQ(items["launch"].size(), 2u);
  EXPECT_EQ(items["launch"][1], -1);
  const Json& call = j["views"]["trace"]["nodes"][items["launch"][0].get<std::size_t>()];
  EXPECT_EQ(call["label"], "cudaLaunchKernel");
  EXPECT_EQ(call["start_ns"], 2'000'000);
  EXPECT_EQ(j["payload_limits"]["device_work_kept"], 2);
  EXPECT_EQ(j["payload_limits"]["device_work_total"], 2);
}

TEST(ViewerPayload, DeviceWorkIsBoundedToTheLongestItems) {
  const Packet p(cg_viewer_test::read_fixture("device_work.jsonl"));
  viewer::PayloadLimits limits;
  limits.device_items = 1;
  const Json j = Json::parse(viewer::project(p.packet, limits));
  const Json& w = j["views"]["device_work"];
  // The 1 ms kernel is kept over the 0.5 ms memcpy; the lane still counts both.
  EXPECT_EQ(w["items"]["duration_ns"], Json::parse("[1000000]"));
  EXPECT_EQ(w["names"], Json::parse(R"J(["gemm()"])J"));
  EXPECT_EQ(w["lanes"][0]["total"], 2);
  EXPECT_EQ(j["payload_limits"]["device_work_kept"], 1);
  EXPECT_EQ(j["payload_limits"]["device_work_total"], 2);
  // The Overview is the analysis of all device work, not of what the lanes kept.
  EXPECT_EQ(j["views"]["overview"]["devices"][0]["busy_ns"], 1'500'000);
}

namespace {

// `trace` (device_work.jsonl, which has one span) with a wait on a second device, cuda:1: a sync
// row at 7 ms of 0.1 ms on stream 3, inside the span.
std::string with_a_wait_on_cuda1(std::string trace) {
  const std::size_t end = trace.find(R"({"kind":"span_end")");
  if (end == std::string::npos) throw std::runtime_error("the trace has no span_end");
  trace.insert(end,
               R"({"kind":"op","span_id":"s1","op_name":"Event Sync","inputs":[],"dtype":"f32",)"
               R"("device":"cuda:1","duration_ns":0,"timestamp_ns":7000000,"total_ns":100000,)"
               R"("stream":3,"op_kind":"sync"})"
               "\n");
  return trace;
}

}  // namespace

// A device with nothing but a wait has no window: its whole step is host only. The step is moved to
// start at 0.5 ms so that a window taken to begin at 0 would show (it would add 0.5 ms before it).
TEST(ViewerPayload, OverviewOfADeviceWithOnlyWaitsIsHostOnly) {
  std::string text = cg_viewer_test::read_fixture("device_work.jsonl");
  const std::string start = R"("start_ns":0,)";
  ASSERT_NE(text.find(start), std::string::npos);
  text.replace(text.find(start), start.size(), R"("start_ns":500000,)");
  const Packet p(with_a_wait_on_cuda1(text));
  const Json j = Json::parse(viewer::project(p.packet));
  const Json& devices = j["views"]["overview"]["devices"];
  ASSERT_EQ(devices.size(), 2u);
  const Json& d = devices[1];
  EXPECT_EQ(d["device"], "cuda:1");
  EXPECT_EQ(d["window_ns"], 0);
  EXPECT_EQ(d["sync_ns"], 100'000);
  EXPECT_EQ(d["total_begin_ns"], 500'000);
  EXPECT_EQ(d["total_ns"], 10'000'000);
  EXPECT_EQ(d["host_only_ns"], 10'000'000);
  // Its wait still gets a lane of its own.
  EXPECT_EQ(j["views"]["device_work"]["lanes"][1],
            Json::parse(R"({"device":"cuda:1","stream":3,"total":1})"));
}

// The GPU model (tag source.device_name, which the Kineto importer reads for the run's own device)
// names the run's device in the Overview; another device of the trace has none, and a trace
// without the tag names none at all.
TEST(ViewerPayload, OverviewNamesTheModelOfTheRunsDeviceOnly) {
  std::string text = with_a_wait_on_cuda1(cg_viewer_test::read_fixture("device_work.jsonl"));
  const Json plain = Json::parse(viewer::project(Packet(text).packet));
  ASSERT_EQ(plain["views"]["overview"]["devices"].size(), 2u);
  for (const Json& d : plain["views"]["overview"]["devices"])
    EXPECT_TRUE(d.at("gpu_model").is_null());

  const std::string no_tags = R"("tags":{})";
  ASSERT_NE(text.find(no_tags), std::string::npos);
  text.replace(text.find(no_tags), no_tags.size(),
               R"("tags":{"source.device_name":"Tesla V100-SXM2-16GB"})");
  const Json named = Json::parse(viewer::project(Packet(text).packet));
  const Json& devices = named["views"]["overview"]["devices"];
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0]["device"], "cuda:0");  // the meta line's device
  EXPECT_EQ(devices[0]["gpu_model"], "Tesla V100-SXM2-16GB");
  EXPECT_EQ(devices[1]["device"], "cuda:1");
  EXPECT_TRUE(devices[1].at("gpu_model").is_null());

  // A tag no importer writes (here with a control character) names no model.
  const std::string named_tag = R"("source.device_name":"Tesla V100-SXM2-16GB")";
  text.replace(text.find(named_tag), named_tag.size(), R"("source.device_name":"V100\u001b[31m")");
  const Json hostile = Json::parse(viewer::project(Packet(text).packet));
  EXPECT_TRUE(hostile["views"]["overview"]["devices"][0].at("gpu_model").is_null());
}
