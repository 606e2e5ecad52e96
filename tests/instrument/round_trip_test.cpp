// Every record kind written by TraceSession parses back through parse_trace with the values that
// were recorded, and every line is byte-identical to what the trace writer (append_event_json)
// produces for the parsed event — so the session writes exactly what the reader accepts.
#include <gtest/gtest.h>

#include <array>
#include <regex>

#include "candle_graph/health.hpp"
#include "candle_graph/instrument.hpp"
#include "candle_graph/trace.hpp"
#include "instrument/session_test_support.hpp"

namespace candle_graph {
namespace {

using testing_support::read_lines;
using testing_support::ScratchDir;

// Writes one of every record kind; the values are arbitrary but distinct so a field mix-up shows.
std::filesystem::path write_every_kind(const std::filesystem::path& path) {
  TraceSession session(path, ProfileRun::training("demo::train::update", 3, "cpu")
                                 .tag("precision", "f32")
                                 .tag("batch", "8"));
  {
    SpanGuard measured = session.begin_measurement("demo/update-000000000003");
    SpanGuard forward = session.begin_step_span("demo/forward", ExecutionStep::forward);
    const std::array<std::uint64_t, 2> x_shape{8, 32};
    session.record_tensor(forward.id(), {.tensor_id = "x",
                                         .shape = x_shape,
                                         .dtype = "f32",
                                         .device = "cpu",
                                         .requires_grad = false,
                                         .category = MemoryCategory::activation});
    const std::array<std::string_view, 2> inputs{"x", "w"};
    const std::array<std::uint64_t, 2> h_shape{32, 32};
    session.record_op(forward.id(), {.op_name = "matmul",
                                     .inputs = inputs,
                                     .output = "h",
                                     .shape = h_shape,
                                     .dtype = "f32",
                                     .device = "cpu",
                                     .duration_ns = 3000,
                                     .timestamp_ns = 2500,
                                     .input_storage_bytes = 2048});
    session.record_memory_alloc(forward.id(), {.tensor_id = "h",
                                               .device = "cpu",
                                               .bytes = 4096,
                                               .dtype = "f32",
                                               .category = MemoryCategory::activation,
                                               .timestamp_ns = 5500,
                                               .op_name = "matmul",
                                               .shape = h_shape});
    forward.end();
    SpanGuard backward =
        session.begin_step_span("demo/backward", ExecutionStep::backward, SpanKind::module);
    session.record_memory_free(backward.id(), {.tensor_id = "h",
                                               .device = "cpu",
                                               .bytes = 4096,
                                               .dtype = "f32",
                                               .category = MemoryCategory::activation,
                                               .timestamp_ns = 9000,
                                               .shape = h_shape});
    session.record_gradient("vb", "encoder.weight", GradientState::present, 0.42);
    session.record_gradient("vb", "encoder.bias", GradientState::missing);
    session.record_edge(SpanId(3), backward.id(), 100);
    backward.end();
    session.record_device_memory("cpu", 1048576, 7340032, 13500, 2097152);
  }
  return session.finish();
}

TEST(InstrumentRoundTrip, EveryRecordKindParsesBackWithItsValues) {
  ScratchDir dir;
  const TraceDocument doc = parse_trace(write_every_kind(dir / "t.jsonl"));

  EXPECT_EQ(doc.schema(), kTraceSchema);
  EXPECT_EQ(doc.run().entrypoint, "demo::train::update");
  EXPECT_EQ(doc.run().phase, ExecutionPhase::train);
  EXPECT_EQ(doc.run().capture_step, 3u);
  EXPECT_EQ(doc.run().warmup_steps, 2u);  // capture_step − 1 (trace6.md §13.1)
  EXPECT_EQ(doc.run().correlation_id, "demo::train::update/update-3");
  EXPECT_EQ(doc.run().device, "cpu");
  EXPECT_EQ(doc.run().timing_mode, TimingMode::host);
  EXPECT_FALSE(doc.run().measured_region_device_synchronized);
  ASSERT_EQ(doc.run().tags.size(), 2u);
  EXPECT_EQ(doc.run().tags[0], (Tag{"batch", "8"}));  // sorted on the wire
  EXPECT_EQ(doc.run().tags[1], (Tag{"precision", "f32"}));

  ASSERT_EQ(doc.spans().size(), 4u);
  EXPECT_EQ(doc.spans()[0].id, "s1");
  EXPECT_FALSE(doc.spans()[0].parent_id.has_value());
  EXPECT_EQ(doc.spans()[0].name, "demo::train::update");
  EXPECT_EQ(doc.spans()[0].start_ns, 0u);
  EXPECT_FALSE(doc.spans()[0].measured);
  EXPECT_EQ(doc.spans()[1].id, "s2");
  EXPECT_EQ(doc.spans()[1].parent_id, "s1");
  EXPECT_TRUE(doc.spans()[1].measured);
  EXPECT_EQ(doc.spans()[2].id, "s3");
  EXPECT_EQ(doc.spans()[2].parent_id, "s2");
  EXPECT_EQ(doc.spans()[2].step, ExecutionStep::forward);
  EXPECT_EQ(doc.spans()[3].id, "s4");
  EXPECT_EQ(doc.spans()[3].parent_id, "s2");
  EXPECT_EQ(doc.spans()[3].kind, SpanKind::module);
  EXPECT_EQ(doc.spans()[3].step, ExecutionStep::backward);
  for (const SpanRecord& s : doc.spans()) EXPECT_TRUE(s.closed) << s.id;

  ASSERT_EQ(doc.ops().size(), 1u);
  const OpEvent& op = doc.ops()[0];
  EXPECT_EQ(op.span_id, "s3");
  EXPECT_EQ(op.op_name, "matmul");
  ASSERT_EQ(op.inputs.size(), 2u);
  EXPECT_EQ(op.inputs[1], "w");
  EXPECT_EQ(op.output, "h");
  EXPECT_EQ(op.duration_ns, 3000u);
  EXPECT_EQ(op.timestamp_ns, 2500u);
  EXPECT_EQ(op.storage_bytes, 4096u);  // resolved: 32 × 32 × 4 bytes (trace6.md §4.12)
  EXPECT_EQ(op.input_storage_bytes, 2048u);

  ASSERT_EQ(doc.tensors().size(), 1u);
  EXPECT_EQ(doc.tensors()[0].tensor_id, "x");
  EXPECT_EQ(doc.tensors()[0].storage_bytes, 1024u);  // 8 × 32 × 4
  EXPECT_EQ(doc.tensors()[0].category, MemoryCategory::activation);

  ASSERT_EQ(doc.memory().size(), 2u);
  EXPECT_EQ(doc.memory()[0].action, MemoryAction::alloc);
  EXPECT_EQ(doc.memory()[0].op_name, "matmul");
  EXPECT_EQ(doc.memory()[0].timestamp_ns, 5500u);
  EXPECT_EQ(doc.memory()[1].action, MemoryAction::free);
  EXPECT_EQ(doc.memory()[1].span_id, "s4");
  EXPECT_FALSE(doc.memory()[1].op_name.has_value());

  ASSERT_EQ(doc.gradients().size(), 2u);
  EXPECT_EQ(doc.gradients()[0].event_id, "gradient-1");
  EXPECT_EQ(doc.gradients()[0].key, "encoder.weight");  // trace6.md §14: the key round-trips
  EXPECT_EQ(doc.gradients()[0].norm, 0.42);
  EXPECT_EQ(doc.gradients()[1].event_id, "gradient-2");
  EXPECT_EQ(doc.gradients()[1].state, GradientState::missing);
  EXPECT_FALSE(doc.gradients()[1].norm.has_value());

  ASSERT_EQ(doc.edges().size(), 1u);
  EXPECT_EQ(doc.edges()[0], (EdgeEvent{"s3", "s4", 100}));
  ASSERT_EQ(doc.device_memory().size(), 1u);
  EXPECT_EQ(doc.device_memory()[0], (DeviceMemoryEvent{13500, "cpu", 1048576, 7340032, 2097152}));

  const TraceHealth health = analyze_health(doc);
  EXPECT_TRUE(health.trusted) << health.error_summary();
}

TEST(InstrumentRoundTrip, EveryLineEqualsTheTraceWriterBytesForTheParsedEvent) {
  ScratchDir dir;
  const auto path = write_every_kind(dir / "t.jsonl");
  const std::vector<std::string> lines = read_lines(path);
  ASSERT_EQ(lines.size(), 17u);  // meta + 4 starts + 4 ends + 8 records
  Arena arena;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string rewritten;
    append_event_json(rewritten, parse_event_line(lines[i], arena));
    EXPECT_EQ(rewritten, lines[i]) << "line " << i + 1;
  }
}

TEST(InstrumentRoundTrip, MetaIdentityFormatsAndInferenceDefaults) {
  ScratchDir dir;
  TraceSession session(dir / "sub/dir/t.jsonl",
                       ProfileRun::inference("Model::forward", 1, "cuda:0"));
  const auto path = session.finish();
  EXPECT_EQ(path, dir / "sub/dir/t.jsonl");  // parent directories are created
  const TraceDocument doc = parse_trace(path);
  EXPECT_EQ(doc.run().phase, ExecutionPhase::infer);
  EXPECT_EQ(doc.run().correlation_id, "Model::forward/inference-1");
  EXPECT_EQ(doc.run().warmup_steps, 0u);
  EXPECT_TRUE(std::regex_match(std::string(doc.run().run_id),
                               std::regex("run-" + std::to_string(::getpid()) + "-[0-9]{18,}")))
      << doc.run().run_id;
  EXPECT_TRUE(std::regex_match(std::string(doc.run().timestamp),
                               std::regex(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)")))
      << doc.run().timestamp;
  EXPECT_FALSE(doc.run().candle_version.has_value());
}

TEST(InstrumentRoundTrip, OpTimestampZeroMeansTheCurrentElapsedTime) {
  ScratchDir dir;
  TraceSession session(dir / "t.jsonl", ProfileRun::training("e", 1, "cpu"));
  const std::uint64_t before = session.elapsed_ns();
  session.record_op(session.envelope(),
                    {.op_name = "add", .dtype = "f32", .device = "cpu", .duration_ns = 5});
  session.record_memory_alloc(session.envelope(),
                              {.tensor_id = "t", .device = "cpu", .bytes = 4, .dtype = "f32"});
  session.record_device_memory("cpu", 1, 2);
  const std::uint64_t after = session.elapsed_ns();
  const TraceDocument doc = parse_trace(session.finish());
  // trace6.md §17.7: "now", not now − duration: bracketed by elapsed_ns() taken around the call.
  EXPECT_GE(doc.ops()[0].timestamp_ns, before);
  EXPECT_LE(doc.ops()[0].timestamp_ns, after);
  EXPECT_GE(doc.memory()[0].timestamp_ns, before);
  EXPECT_LE(doc.memory()[0].timestamp_ns, after);
  EXPECT_GE(doc.device_memory()[0].timestamp_ns, before);
  EXPECT_LE(doc.device_memory()[0].timestamp_ns, after);
  EXPECT_FALSE(doc.device_memory()[0].reserved_bytes.has_value());
  // An empty shape is one element (trace6.md §4.12): 4 bytes of f32.
  EXPECT_EQ(doc.ops()[0].storage_bytes, 4u);
}

TEST(InstrumentRoundTrip, OpsAndTensorsNeverFabricateMemoryEvents) {
  ScratchDir dir;
  TraceSession session(dir / "t.jsonl", ProfileRun::training("e", 1, "cpu"));
  const std::array<std::uint64_t, 2> shape{32, 32};
  session.record_op(
      session.envelope(),
      {.op_name = "matmul", .output = "y", .shape = shape, .dtype = "f32", .device = "cpu"});
  session.record_tensor(
      session.envelope(),
      {.tensor_id = "y", .shape = shape, .dtype = "f32", .device = "cpu", .requires_grad = true});
  const TraceDocument doc = parse_trace(session.finish());
  EXPECT_EQ(doc.ops().size(), 1u);
  EXPECT_EQ(doc.tensors().size(), 1u);
  EXPECT_TRUE(
      doc.memory().empty());  // trace6.md §17.7 op metadata must not fabricate tensor lifetime
}

TEST(InstrumentRoundTrip, StringsAreEscapedAndNonFiniteNormsOmitted) {
  ScratchDir dir;
  TraceSession session(dir / "t.jsonl", ProfileRun::training("a\"b\\c\n\x01", 1, "cpu"));
  session.record_gradient("vb", "k\t\"", GradientState::non_finite,
                          std::numeric_limits<double>::quiet_NaN());
  const TraceDocument doc = parse_trace(session.finish());
  EXPECT_EQ(doc.run().entrypoint, "a\"b\\c\n\x01");
  EXPECT_EQ(doc.gradients()[0].key, "k\t\"");
  EXPECT_FALSE(doc.gradients()[0].norm.has_value());
}

// trace6.md §14 instrumentation checklist.
TEST(InstrumentChecklist, MeasurementAndNestedSpanGiveThreeStartsAndEnds) {
  ScratchDir dir;
  TraceSession session(dir / "t.jsonl", ProfileRun::inference("Model::forward", 1, "cpu"));
  {
    SpanGuard measured = session.begin_measurement("Model::forward");
    SpanGuard nested = session.begin_span("linear", SpanKind::op);
    // A few microseconds of work so durations are positive on any clock resolution.
    volatile double sink = 0;
    for (int i = 0; i < 20000; ++i) sink = sink + i;
  }
  const auto path = session.finish();
  const std::vector<std::string> lines = read_lines(path);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0].rfind(R"({"kind":"meta")", 0), 0u);
  const TraceDocument doc = parse_trace(path);
  ASSERT_EQ(doc.spans().size(), 3u);
  EXPECT_EQ(doc.spans()[0].name, "Model::forward");
  EXPECT_FALSE(doc.spans()[0].parent_id.has_value());
  EXPECT_EQ(doc.spans()[1].parent_id, "s1");
  EXPECT_TRUE(doc.spans()[1].measured);
  EXPECT_EQ(doc.spans()[2].parent_id, "s2");
  EXPECT_EQ(doc.spans()[2].kind, SpanKind::op);
  for (const SpanRecord& s : doc.spans()) {
    EXPECT_TRUE(s.closed);
    EXPECT_GT(s.duration_ns, 0u) << s.id;
  }
  // The envelope contains the measured region, which contains the nested span.
  EXPECT_TRUE(analyze_health(doc).trusted) << analyze_health(doc).error_summary();
}

TEST(InstrumentChecklist, MeasuredRegionFlagKeepsHostTiming) {
  const ProfileRun run =
      ProfileRun::training("e", 1, "cuda:0").measured_region_device_synchronized();
  EXPECT_TRUE(run.fields().measured_region_device_synchronized);
  EXPECT_EQ(run.fields().timing_mode, TimingMode::host);
}

TEST(InstrumentChecklist, DeviceSynchronizedSetsTimingModeAndTheFlag) {
  ScratchDir dir;
  TraceSession session(
      dir / "t.jsonl",
      ProfileRun::training("e", 1, "cuda:0").device_synchronized().correlation_id("custom-key"));
  const TraceDocument doc = parse_trace(session.finish());
  EXPECT_EQ(doc.run().timing_mode, TimingMode::device_synchronized);
  EXPECT_TRUE(doc.run().measured_region_device_synchronized);
  EXPECT_EQ(doc.run().correlation_id, "custom-key");
}

TEST(InstrumentChecklist, LvalueBuilderAndTagReplacement) {
  ProfileRun run = ProfileRun::training("e", 0, "cpu");
  run.tag("k", "1").tag("k", "2");
  EXPECT_EQ(run.fields().tags.at("k"), "2");
  EXPECT_EQ(run.fields().warmup_steps, 0u);  // saturating: 0 − 1 stays 0
}

}  // namespace
}  // namespace candle_graph
