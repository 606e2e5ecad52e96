// The real Kineto traces in ../shared/fixtures/pytorch-chrome-trace (HTA's test data, SOURCES.md)
// convert to trusted trace/6 traces. The expected counts were read from the fixtures with jq (and
// Python's json for the runtime calls and cuda_sync rows), not from the converter:
//   steps:  jq '[.traceEvents[]|select(.ph=="X" and (.name|startswith("ProfilerStep#")))]'
//   ops in a step [ts, ts+dur]: jq '[.traceEvents[]|select(.ph=="X" and .cat=="cpu_op" and
//           .ts>=R0 and .ts<=R1)]|length'
//   device ops: kernel/gpu_memcpy/gpu_memset whose launching cuda_runtime call (same
//           args.correlation) starts inside the step: jq with a correlation->ts map
//   annotations: user_annotation other than ProfilerStep# overlapping the step
//   runtime calls: cuda_runtime / cuda_driver starting inside the step
// hta-cuda-event-sync-a100: ProfilerStep#100: cpu_op 10, runtime 12, device 9 (4 kernel +
//   1 memcpy + 4 cuda_sync), no annotations -> spans root + step = 2.
// hta-minitoy-train-mi250-rocm6.2: ProfilerStep#1: cpu_op 70, runtime 20, device 16 (14 kernel +
//   2 memcpy),
//   1 annotation (Optimizer.step#SGD.step), 6 autograd evaluate_function ops; ProfilerStep#2 has
//   0 cpu_op (cut short by the profiler's stop) -> the default is #1; spans root + step +
//   optimizer + inferred backward + inferred forward = 5.
// hta-simple_add-a100: no ProfilerStep -> the whole window: cpu_op 359, cuda_runtime 331,
//   kernel 79, gpu_memcpy 16, gpu_memset 3, cuda_sync 41 (SOURCES.md's table agrees),
//   user_annotation 8 -> spans 2 + 8 = 10.
#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <random>

#include "support/convert_helpers.hpp"
#include "support/run_program.hpp"

namespace cgimport {
namespace {

using candle_graph::ExecutionPhase;
using candle_graph::ExecutionStep;

std::size_t gpu_ops_named(const candle_graph::TraceDocument& doc, std::string_view prefix) {
  return static_cast<std::size_t>(
      std::count_if(doc.device_ops().begin(), doc.device_ops().end(),
                    [&](const auto& op) { return op.op_name.substr(0, prefix.size()) == prefix; }));
}

TEST(KinetoFixtures, CudaEventSyncStep100IsTrusted) {
  TempDir dir;
  const Converted c =
      convert_and_read(shared_fixture("hta-cuda-event-sync-a100.json"), dir / "t.jsonl");
  EXPECT_TRUE(c.health.trusted) << error_codes(c.health);
  EXPECT_EQ(c.result.format, "kineto");
  EXPECT_EQ(c.result.measured, "ProfilerStep#100");
  EXPECT_EQ(c.doc.spans().size(), 2u);
  EXPECT_EQ(c.doc.ops().size(), 10u + 12u);
  EXPECT_EQ(c.device_ops, 9u);
  EXPECT_EQ(gpu_ops_named(c.doc, "Memcpy"), 1u);
  EXPECT_EQ(c.doc.run().capture_step, 100u);
  EXPECT_EQ(c.doc.run().warmup_steps, 99u);
  EXPECT_EQ(c.doc.run().device, "cuda:0");
  // The 4 cuda_sync rows are device work of kind sync; the Trace slice is not mapped: reported,
  // not silently lost (jq counts).
  EXPECT_EQ(std::count_if(c.doc.device_ops().begin(), c.doc.device_ops().end(),
                          [](const auto& op) { return op.op_kind == candle_graph::OpKind::sync; }),
            4);
  EXPECT_EQ(c.tag("convert.ignored.Trace"), "1");
  EXPECT_EQ(c.tag("convert.ignored.metadata"), "36");
  // ac2g: 7 starts, 14 ends (SOURCES.md: flows whose start and end counts differ).
  EXPECT_EQ(c.tag("convert.flows_not_mapped"), "21");
  EXPECT_FALSE(c.tag("convert.unmatched_flow_ends").empty());
  const auto measured = std::find_if(c.doc.spans().begin(), c.doc.spans().end(),
                                     [](const auto& s) { return s.measured; });
  ASSERT_NE(measured, c.doc.spans().end());
  EXPECT_EQ(measured->duration_ns, 3154000u);  // dur 3154 µs in the fixture
}

TEST(KinetoFixtures, RocmTrainingStepHasForwardBackwardOptimizer) {
  TempDir dir;
  const Converted c =
      convert_and_read(shared_fixture("hta-minitoy-train-mi250-rocm6.2.json"), dir / "t.jsonl");
  EXPECT_TRUE(c.health.trusted) << error_codes(c.health);
  EXPECT_EQ(c.result.measured, "ProfilerStep#1");
  EXPECT_EQ(c.tag("convert.incomplete_last_step_skipped"), "1");
  EXPECT_EQ(c.doc.spans().size(), 5u);
  EXPECT_EQ(c.doc.ops().size(), 70u + 20u);
  EXPECT_EQ(c.device_ops, 16u);
  EXPECT_EQ(gpu_ops_named(c.doc, "Memcpy"), 2u);
  EXPECT_EQ(c.doc.run().phase, ExecutionPhase::train);
  EXPECT_EQ(c.health.coverage.forward_spans, 1u);
  EXPECT_EQ(c.health.coverage.backward_spans, 1u);
  EXPECT_EQ(c.health.coverage.optimizer_spans, 1u);
  // traceName "./logs/mi250_minitoy_train_ROCm6_2_kineto.json" (jq .traceName): its file name.
  EXPECT_EQ(c.doc.run().entrypoint, "mi250_minitoy_train_ROCm6_2_kineto");
  // The kernels ran on GPU 2 (pid 2, args.device 2).
  EXPECT_EQ(c.doc.run().device, "cuda:2");
  // Fractional µs: ProfilerStep#1 "dur": 9288.291 -> 9288291 ns exactly.
  const auto measured = std::find_if(c.doc.spans().begin(), c.doc.spans().end(),
                                     [](const auto& s) { return s.measured; });
  ASSERT_NE(measured, c.doc.spans().end());
  EXPECT_EQ(measured->duration_ns, 9288291u);
  // Shapes and dtypes from Input Dims / Input type (record_shapes=1): aten::linear's first input.
  const auto linear = std::find_if(c.doc.ops().begin(), c.doc.ops().end(),
                                   [](const auto& op) { return op.op_name == "aten::linear"; });
  ASSERT_NE(linear, c.doc.ops().end());
  EXPECT_EQ(linear->dtype, "f32");
  EXPECT_FALSE(linear->shape.empty());
}

TEST(KinetoFixtures, RocmStepTwoOnRequest) {
  TempDir dir;
  candle_graph::ImportOptions options;
  options.step = 2;
  const Converted c = convert_and_read(shared_fixture("hta-minitoy-train-mi250-rocm6.2.json"),
                                       dir / "t.jsonl", options);
  EXPECT_TRUE(c.health.trusted) << error_codes(c.health);
  EXPECT_EQ(c.result.measured, "ProfilerStep#2");
  EXPECT_EQ(c.doc.ops().size(), 0u);  // jq: no cpu_op inside ProfilerStep#2
  EXPECT_EQ(c.doc.run().capture_step, 2u);
  options.step = 7;
  try {
    candle_graph::import::convert_pytorch_trace(
        shared_fixture("hta-minitoy-train-mi250-rocm6.2.json"), dir / "u.jsonl", options);
    FAIL() << "--step 7 must fail";
  } catch (const candle_graph::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no ProfilerStep#7"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("steps present: 1, 2"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "u.jsonl"));
}

TEST(KinetoFixtures, SimpleAddWithoutProfilerStepMeasuresTheWholeWindow) {
  TempDir dir;
  const Converted c = convert_and_read(shared_fixture("hta-simple_add-a100.json"), dir / "t.jsonl");
  EXPECT_TRUE(c.health.trusted) << error_codes(c.health);
  EXPECT_EQ(c.result.measured, "profiled window");
  EXPECT_EQ(c.doc.spans().size(), 10u);
  EXPECT_EQ(c.doc.ops().size(), 359u + 331u);
  EXPECT_EQ(c.device_ops, 79u + 16u + 3u + 41u);
  EXPECT_EQ(gpu_ops_named(c.doc, "Memcpy"), 16u);
  EXPECT_EQ(gpu_ops_named(c.doc, "Memset"), 3u);
  EXPECT_EQ(c.tag("convert.ignored.cuda_runtime"), "");        // runtime calls are mapped now
  EXPECT_EQ(c.tag("convert.dropped_ops_outside_window"), "");  // nothing dropped
  // "[param|...|measure|forward]" annotations are tagged forward by their last name token.
  EXPECT_GE(c.health.coverage.forward_spans, 1u);
}

// Events in any order, and gzip input: the same trace comes out.
TEST(KinetoFixtures, ShuffledAndGzippedInputGiveTheSameTrace) {
  TempDir dir;
  const fs::path src = shared_fixture("hta-minitoy-train-mi250-rocm6.2.json");
  nlohmann::json j = nlohmann::json::parse(slurp(src));
  std::mt19937 rng(7);
  std::shuffle(j["traceEvents"].begin(), j["traceEvents"].end(), rng);
  const fs::path shuffled = dir.write("shuffled.json", j.dump(1));
  const auto gzip = candle_graph::testing::run_program({"/bin/gzip", "-c", src.string()});
  ASSERT_EQ(gzip.exit_code, 0) << gzip.err;
  ASSERT_TRUE(candle_graph::testing::write_file(dir / "t.json.gz", gzip.out));
  const Converted a = convert_and_read(src, dir / "a.jsonl");
  const Converted b = convert_and_read(shuffled, dir / "b.jsonl");
  const Converted z = convert_and_read(dir / "t.json.gz", dir / "z.jsonl");
  EXPECT_EQ(z.tag("source.gzip"), "true");
  for (const Converted* other : {&b, &z}) {
    EXPECT_TRUE(other->health.trusted) << error_codes(other->health);
    EXPECT_EQ(other->doc.spans(), a.doc.spans());
    ASSERT_EQ(other->doc.ops().size(), a.doc.ops().size());
    // Ops with equal timestamps may swap places in the shuffled copy: compare as multisets.
    auto key = [](const candle_graph::OpEvent& op) {
      return std::string(op.op_name) + "|" + std::string(op.span_id) + "|" +
             std::to_string(op.timestamp_ns) + "|" + std::to_string(op.duration_ns);
    };
    std::vector<std::string> x, y;
    for (const auto& op : a.doc.ops()) x.push_back(key(op));
    for (const auto& op : other->doc.ops()) y.push_back(key(op));
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    EXPECT_EQ(x, y);
  }
}

}  // namespace
}  // namespace cgimport
