// Hand-built Kineto traces for what the fixtures lack: [memory] events (with and without cat,
// CUDA and CPU), string/negative pid/tid, fractional µs, repairs of broken nesting, and the
// candle-graph Chrome flavour (the export engineer's contract).
#include "candle_graph/analysis.hpp"
#include "support/convert_helpers.hpp"

namespace cgimport {
namespace {

using candle_graph::ExecutionStep;
using candle_graph::MemoryAction;

// The memory story (device 1 = CUDA id 0; addresses and sizes chosen by hand):
//   t=900  alloc 256 @1     before the window (ProfilerStep#4 is 1000..1100 µs)
//   t=1011 alloc 1000 @100  A (no "cat")
//   t=1015 alloc 64 @5      CPU (Device Type 0), freed at 1016
//   t=1020 free  256 @1     block allocated before the window -> dropped, counted
//   t=1030 alloc 3000 @200  B
//   t=1040 free  1000 @100  A
//   t=1050 alloc 500 @100   C (the address is reused)
//   t=1060 free  77 @999    never allocated -> dropped, counted
//   t=1070 free  3000 @200  B
//   t=1200 alloc 9999 @300  after the window -> not kept
// Live cuda:0 bytes: 1000, 4000 (A+B), 3000, 3500, 500 -> peak 4000 at t=1030 (30 µs into the
// step). C stays live: retained (a warning, still trusted).
constexpr const char* kMemoryTrace = R"({"schemaVersion":1,"traceName":"memory-demo","traceEvents":[
{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":-7,"tid":"worker 1","ts":1070,"args":{"Device Type":1,"Device Id":0,"Addr":200,"Bytes":-3000,"Total Allocated":500}},
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#4","pid":-7,"tid":"worker 1","ts":1000,"dur":100},
{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":-7,"tid":"worker 1","ts":900,"args":{"Device Type":1,"Device Id":0,"Addr":1,"Bytes":256}},
{"ph":"i","s":"t","name":"[memory]","pid":-7,"tid":"worker 1","ts":1011,"args":{"Device Type":1,"Device Id":0,"Addr":100,"Bytes":1000}},
{"ph":"i","s":"t","name":"[memory]","pid":-7,"tid":"worker 1","ts":1015,"args":{"Device Type":0,"Device Id":-1,"Addr":5,"Bytes":64}},
{"ph":"i","s":"t","name":"[memory]","pid":-7,"tid":"worker 1","ts":1016,"args":{"Device Type":0,"Device Id":-1,"Addr":5,"Bytes":-64}},
{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":-7,"tid":"worker 1","ts":1020,"args":{"Device Type":1,"Device Id":0,"Addr":1,"Bytes":-256}},
{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":-7,"tid":"worker 1","ts":1030,"args":{"Device Type":1,"Device Id":0,"Addr":200,"Bytes":3000}},
{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":-7,"tid":"worker 1","ts":1040,"args":{"Device Type":1,"Device Id":0,"Addr":100,"Bytes":-1000}},
{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":-7,"tid":"worker 1","ts":1050,"args":{"Device Type":1,"Device Id":0,"Addr":100,"Bytes":500}},
{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":-7,"tid":"worker 1","ts":1060,"args":{"Device Type":1,"Device Id":0,"Addr":999,"Bytes":-77}},
{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":-7,"tid":"worker 1","ts":1200,"args":{"Device Type":1,"Device Id":0,"Addr":300,"Bytes":9999}},
{"ph":"X","cat":"cpu_op","name":"aten::empty","pid":-7,"tid":"worker 1","ts":1010.5,"dur":2.25,"args":{"External id":1}}
]})";

TEST(ConstructedKineto, MemoryEventsGiveTheExpectedPeak) {
  TempDir dir;
  const Converted c = convert_and_read(dir.write("mem.json", kMemoryTrace), dir / "t.jsonl");
  EXPECT_TRUE(c.health.trusted) << error_codes(c.health);
  const candle_graph::MemoryProfile p = candle_graph::analyze_memory(c.doc);
  EXPECT_EQ(p.summary.peak_bytes, 4000u);
  EXPECT_EQ(p.summary.peak_device, "cuda:0");
  EXPECT_EQ(p.summary.peak_timestamp_ns, 30000u);
  // Kept: A, CPU alloc+free, B, free A, C, free B = 7 events; 3 dropped/outside, all counted.
  EXPECT_EQ(c.doc.memory().size(), 7u);
  EXPECT_EQ(c.tag("convert.dropped_frees_of_blocks_allocated_before_window"), "1");
  EXPECT_EQ(c.tag("convert.dropped_unpaired_frees"), "1");
  EXPECT_EQ(c.tag("convert.memory_events_outside_window"), "2");
  // Fractional µs and a negative pid / string tid: the op keeps its exact ns.
  ASSERT_EQ(c.doc.ops().size(), 1u);
  EXPECT_EQ(c.doc.ops()[0].timestamp_ns, 10500u);
  EXPECT_EQ(c.doc.ops()[0].duration_ns, 2250u);
  EXPECT_EQ(c.doc.run().entrypoint, "memory-demo");
  EXPECT_EQ(c.doc.run().capture_step, 4u);
}

// Annotations that break trace/6 nesting are repaired and counted: one crossing its sibling's
// end, one enclosing the step, one outside it, one crossing the step's start.
TEST(ConstructedKineto, BrokenNestingIsRepairedAndReported) {
  TempDir dir;
  const Converted c = convert_and_read(dir.write("nest.json", R"({"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"train loop","pid":1,"tid":1,"ts":0,"dur":5000},
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":1000,"dur":1000},
{"ph":"X","cat":"user_annotation","name":"model/forward","pid":1,"tid":1,"ts":1100,"dur":400},
{"ph":"X","cat":"user_annotation","name":"crossing","pid":1,"tid":2,"ts":1300,"dur":500},
{"ph":"X","cat":"user_annotation","name":"early","pid":1,"tid":1,"ts":900,"dur":200},
{"ph":"X","cat":"user_annotation","name":"later","pid":1,"tid":1,"ts":3000,"dur":10},
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1150,"dur":10},
{"ph":"X","cat":"cpu_op","name":"aten::relu","pid":1,"tid":1,"ts":2500,"dur":10}
]})"),
                                       dir / "t.jsonl");
  EXPECT_TRUE(c.health.trusted) << error_codes(c.health);
  EXPECT_EQ(c.tag("convert.dropped_spans_enclosing_step"), "1");
  EXPECT_EQ(c.tag("convert.dropped_spans_outside_window"), "1");
  EXPECT_EQ(c.tag("convert.clamped_spans_to_window"), "1");
  EXPECT_EQ(c.tag("convert.clamped_crossing_spans"), "1");
  EXPECT_EQ(c.tag("convert.dropped_ops_outside_window"), "1");
  // root, step, early (clamped to 1000..1100), model/forward, crossing (now inside forward).
  ASSERT_EQ(c.doc.spans().size(), 5u);
  EXPECT_EQ(c.health.coverage.forward_spans, 1u);
  ASSERT_EQ(c.doc.ops().size(), 1u);
  const auto span = c.doc.spans()[c.doc.op_span()[0]];
  EXPECT_EQ(span.name, "model/forward");
}

TEST(ConstructedKineto, UnreadableDurationsAreZeroedAndCounted) {
  // Two of the three ops carry a `dur` that is no duration (negative, a word): each is read as 0
  // and counted by that reason, never used as a huge unsigned number.
  TempDir dir;
  const Converted c = convert_and_read(dir.write("dur.json", R"({"traceEvents":[
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10,"dur":-5},
{"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":20,"dur":"soon"},
{"ph":"X","cat":"cpu_op","name":"aten::relu","pid":1,"tid":1,"ts":30,"dur":4}
]})"),
                                       dir / "t.jsonl");
  EXPECT_TRUE(c.health.trusted) << error_codes(c.health);
  EXPECT_EQ(c.tag("convert.zeroed_negative_or_unreadable_durations"), "2");
  ASSERT_EQ(c.doc.ops().size(), 3u);
  std::uint64_t total = 0;
  for (const auto& op : c.doc.ops()) total += op.total_ns.value_or(op.duration_ns);
  EXPECT_EQ(total, 4000u);
}

// candle-graph's own Chrome export, in the shape agreed with the exporter: ids, measured flag,
// steps and exact ns come back from args (not from the µs ts/dur).
TEST(ConstructedKineto, CandleGraphChromeExportMapsBackExactly) {
  TempDir dir;
  const Converted c = convert_and_read(dir.write("export.json", R"({"traceEvents":[
{"ph":"M","name":"process_name","pid":1,"args":{"name":"candle-graph"}},
{"ph":"X","cat":"span","name":"demo::train","pid":1,"tid":1,"ts":0,"dur":15000,"args":{"span_id":"s1","measured":false,"span_kind":"function","start_ns":0,"duration_ns":15000001}},
{"ph":"X","cat":"span","name":"update-1","pid":1,"tid":1,"ts":1000,"dur":13000,"args":{"span_id":"s2","parent_id":"s1","measured":true,"span_kind":"function","start_ns":1000000,"duration_ns":13000000}},
{"ph":"X","cat":"span","name":"update-1/forward","pid":1,"tid":1,"ts":2000,"dur":5000,"args":{"span_id":"s3","parent_id":"s2","measured":false,"step":"forward","span_kind":"module","start_ns":2000000,"duration_ns":5000123}},
{"ph":"X","cat":"op","name":"matmul","pid":1,"tid":1,"ts":2500,"dur":3000,"args":{"span_id":"s3","inputs":["x","w"],"output":"h","shape":[8,64],"dtype":"f32","device":"cpu","timestamp_ns":2500000,"duration_ns":3000007,"storage_bytes":2048}},
{"ph":"X","cat":"op","name":"relu","pid":1,"tid":1,"ts":5600,"dur":1,"args":{"span_id":"s3","inputs":["h"],"shape":[8,64],"dtype":"f32","device":"cpu","timestamp_ns":5600000,"duration_ns":999}},
{"ph":"C","name":"memory cpu","pid":1,"ts":2500,"args":{"allocated":2048}}
],"otherData":{"schema":"candle-graph/chrome/1","entrypoint":"demo::train","run_id":"run-1-2","phase":"train","capture_step":1,"warmup_steps":0,"device":"cpu","timing_mode":"host","tags":{"precision":"f32"}}})"),
                                       dir / "t.jsonl");
  EXPECT_TRUE(c.health.trusted) << error_codes(c.health);
  EXPECT_EQ(c.result.format, "candle-graph-chrome");
  EXPECT_EQ(c.doc.run().entrypoint, "demo::train");
  EXPECT_EQ(c.doc.run().run_id, "run-1-2");
  EXPECT_EQ(c.tag("precision"), "f32");
  ASSERT_EQ(c.doc.spans().size(), 3u);
  const auto s3 = c.doc.spans()[c.doc.find_span("s3")];
  EXPECT_EQ(s3.name, "update-1/forward");
  EXPECT_EQ(s3.duration_ns, 5000123u);
  EXPECT_EQ(s3.step, ExecutionStep::forward);
  EXPECT_EQ(s3.kind, candle_graph::SpanKind::module);
  EXPECT_TRUE(c.doc.spans()[c.doc.find_span("s2")].measured);
  EXPECT_EQ(c.doc.spans()[c.doc.find_span("s1")].duration_ns, 15000001u);
  ASSERT_EQ(c.doc.ops().size(), 2u);
  EXPECT_EQ(c.doc.ops()[0].op_name, "matmul");
  EXPECT_EQ(c.doc.ops()[0].duration_ns, 3000007u);
  ASSERT_EQ(c.doc.ops()[0].inputs.size(), 2u);
  EXPECT_EQ(c.doc.ops()[0].inputs[1], "w");
  EXPECT_EQ(c.doc.ops()[0].output, "h");
  EXPECT_EQ(c.doc.ops()[0].storage_bytes, 2048u);
  EXPECT_EQ(c.doc.ops()[1].duration_ns, 999u);
  EXPECT_EQ(c.doc.ops()[1].timestamp_ns, 5600000u);
}

// The model of the run's GPU (the lowest device index of its kernels) is the entry of
// deviceProperties (computeProperties in 2021) with that id; a missing, malformed or hostile
// entry leaves the tag out without an error. Expected values are written by hand from the text.
TEST(ConstructedKineto, TheGpuModelIsReadFromTheDevicePropertiesOfItsIndex) {
  const auto trace = [](const std::string& properties) {
    return R"({"traceName":"gpus",)" + properties + R"("traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":1000,"dur":100},
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1010,"dur":20,"args":{"External id":1}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1012,"dur":5,"args":{"correlation":7}},
{"ph":"X","cat":"kernel","name":"gemm","pid":2,"tid":7,"ts":1020,"dur":10,"args":{"device":2,"stream":7,"correlation":7}}
]})";
  };
  const std::string two = R"([{"id":0,"name":"GPU zero"},{"id":2,"name":"GPU two"}])";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"("deviceProperties":)" + two + ",", "GPU two"},
      {R"("computeProperties":)" + two + ",", "GPU two"},
      {"", ""},                                                      // no properties
      {R"("deviceProperties":{"id":2,"name":"GPU two"},)", ""},      // not an array
      {R"("deviceProperties":[{"id":0,"name":"GPU zero"}],)", ""},   // no entry for device 2
      {R"("deviceProperties":[{"id":"2","name":"GPU two"}],)", ""},  // id of the wrong type
      {R"("deviceProperties":[{"id":2,"name":7}],)", ""},            // name of the wrong type
      {R"("deviceProperties":[{"id":2,"name":""}],)", ""},
      {R"("deviceProperties":[{"id":2,"name":"GPU\ntwo"}],)", ""},  // a control character
      {R"("deviceProperties":[{"id":2,"name":")" + std::string(257, 'x') + R"("}],)", ""},
      {R"("deviceProperties":[{"id":2,"name":")" + std::string(256, 'x') + R"("}],)",
       std::string(256, 'x')},
  };
  for (const auto& [properties, model] : cases) {
    TempDir dir;
    const Converted c =
        convert_and_read(dir.write("gpus.json", trace(properties)), dir / "t.jsonl");
    EXPECT_TRUE(c.health.trusted) << properties << error_codes(c.health);
    EXPECT_EQ(c.doc.run().device, "cuda:2");
    EXPECT_EQ(c.tag("source.device_name"), model) << properties;
  }
}

}  // namespace
}  // namespace cgimport
