// trace6.md §4.5.1 and §4.2.1, the fields this port adds to trace/6: read by both readers (the
// canonical-line scanner and simdjson), written back exactly, omitted when absent so an op that
// needs none of them is the original's line, and rejected with FILE:LINE when inconsistent.
#include "support/trace_lines.hpp"

namespace {

using ::testing::HasSubstr;
using namespace cgtest;

const std::string kRuntime =
    R"({"kind":"op","span_id":"s1","op_name":"cudaLaunchKernel","inputs":[],"shape":[],"dtype":"unknown","device":"cpu","duration_ns":4,"timestamp_ns":2,"storage_bytes":0,"op_kind":"runtime","total_ns":4,"thread":7,"correlation":55})";
const std::string kKernel =
    R"({"kind":"op","span_id":"s1","op_name":"_Z4gemmv","inputs":[],"shape":[],"dtype":"unknown","device":"cuda:0","duration_ns":0,"timestamp_ns":9,"storage_bytes":0,"op_kind":"kernel","total_ns":30,"stream":7,"correlation":55})";
const std::string kHost =
    R"({"kind":"op","span_id":"s1","op_name":"aten::mm","inputs":[],"shape":[],"dtype":"f32","device":"cpu","duration_ns":6,"timestamp_ns":1,"storage_bytes":0,"total_ns":10,"thread":7})";

std::string trace_with(const std::vector<std::string>& ops) {
  std::vector<std::string> lines = {meta_line(), span_start("s1", "", 0, true)};
  lines.insert(lines.end(), ops.begin(), ops.end());
  lines.push_back(span_end("s1", 100));
  return join_lines(lines);
}

TEST(OpExtensions, BothReadersKeepEveryFieldAndTheWriterWritesThemBack) {
  const std::string text = trace_with({kHost, kRuntime, kKernel});
  const candle_graph::TraceDocument doc = candle_graph::parse_trace_text(text, "t.jsonl");
  ASSERT_EQ(doc.ops().size(), 2u);  // the host op and the runtime call
  ASSERT_EQ(doc.device_ops().size(), 1u);
  const candle_graph::OpEvent& k = doc.device_ops()[0];
  EXPECT_EQ(k.op_kind, candle_graph::OpKind::kernel);
  EXPECT_EQ(k.total_ns, 30u);
  EXPECT_EQ(k.lane, 7u);
  EXPECT_EQ(k.correlation, 55u);
  EXPECT_EQ(doc.ops()[0].total_ns, 10u);
  EXPECT_EQ(doc.ops()[0].lane, 7u);
  EXPECT_EQ(doc.ops()[1].op_kind, candle_graph::OpKind::runtime);
  // Written back, the op lines are the input lines (stream order: host ops, then device work).
  const std::string written = candle_graph::write_jsonl_string(doc);
  for (const std::string& line : {kHost, kRuntime, kKernel})
    EXPECT_NE(written.find(line + "\n"), std::string::npos) << line << "\n---\n" << written;
  // The same text with its keys in another order goes through simdjson: the same document.
  const std::string head = R"({"kind":"op",)", kind = R"(,"op_kind":"kernel")";
  std::string reordered = kKernel;
  reordered.erase(reordered.find(kind), kind.size());
  reordered.replace(0, head.size(), R"({"op_kind":"kernel","kind":"op",)");
  EXPECT_EQ(candle_graph::parse_trace_text(trace_with({kHost, kRuntime, reordered}), "t.jsonl"),
            doc);
}

TEST(OpExtensions, AnOpWithoutThemIsWrittenAsTheOriginalWritesIt) {
  const std::string plain =
      R"({"kind":"op","span_id":"s1","op_name":"matmul","inputs":[],"shape":[],"dtype":"f32","device":"cpu","duration_ns":3,"timestamp_ns":2,"storage_bytes":0})";
  const std::string written =
      candle_graph::write_jsonl_string(candle_graph::parse_trace_text(trace_with({plain}), "t"));
  EXPECT_NE(written.find(plain + "\n"), std::string::npos) << written;
  const std::string op_line = written.substr(written.find(R"({"kind":"op")"));
  for (const char* key : {"op_kind", "total_ns", "thread", "stream", "correlation"})
    EXPECT_EQ(op_line.substr(0, op_line.find('\n')).find(key), std::string::npos) << key;
}

TEST(OpExtensions, InclusiveTimeBelowTheExclusiveIsRejectedAtItsLine) {
  std::string bad = kHost;
  bad.replace(bad.find(R"("total_ns":10)"), 13, R"("total_ns":5)");
  expect_rejected(trace_with({bad}), 3, HasSubstr("total_ns 5 below its duration_ns 6"));
}

TEST(OpExtensions, DeviceWorkWithHostTimeIsRejectedAtItsLine) {
  std::string bad = kKernel;
  bad.replace(bad.find(R"("duration_ns":0)"), 15, R"("duration_ns":8)");
  expect_rejected(trace_with({kRuntime, bad}), 4,
                  HasSubstr("device work takes no host time, its device time is total_ns"));
}

TEST(OpExtensions, AnUnknownOpKindIsRejectedWithTheAcceptedValues) {
  std::string bad = kRuntime;
  bad.replace(bad.find(R"("runtime")"), 9, R"("telemetry")");
  expect_rejected(trace_with({bad}), 3, HasSubstr("`runtime`"));
}

TEST(ProfilerSteps, TheMetaListIsReadAndWrittenBack) {
  std::string meta = meta_line();
  meta.insert(
      meta.size() - 1,
      R"(,"profiler_steps":[{"step":9,"wall_ns":100,"device_busy_ns":40},{"step":10,"wall_ns":120,"device_busy_ns":50}])");
  const std::string text = join_lines({meta, span_start("s1", "", 0, true), span_end("s1", 100)});
  const candle_graph::TraceDocument doc = candle_graph::parse_trace_text(text, "t.jsonl");
  ASSERT_EQ(doc.run().profiler_steps.size(), 2u);
  EXPECT_EQ(doc.run().profiler_steps[1].step, 10u);
  EXPECT_EQ(doc.run().profiler_steps[1].device_busy_ns, 50u);
  EXPECT_EQ(candle_graph::parse_trace_text(candle_graph::write_jsonl_string(doc), "t"), doc);
  std::string broken = meta;
  broken.replace(broken.find(R"(,"device_busy_ns":40)"), 20, "");
  expect_rejected(join_lines({broken, span_start("s1", "", 0, true), span_end("s1", 100)}), 1,
                  HasSubstr("step, wall_ns and device_busy_ns"));
}

// The collective fields (trace6.md §4.5.1): kept in the document, written back as they came, and
// a process group or sequence number without the collective's name refused at its line.
const std::string kCollective =
    R"({"kind":"op","span_id":"s1","op_name":"record_param_comms","inputs":[],"shape":[],"dtype":"unknown","device":"cpu","duration_ns":3,"timestamp_ns":20,"storage_bytes":0,"total_ns":3,"thread":7,"collective":"allreduce","process_group":"0","collective_seq":12})";

TEST(OpExtensions, TheCollectiveIsReadAndWrittenBack) {
  const candle_graph::TraceDocument doc =
      candle_graph::parse_trace_text(trace_with({kHost, kCollective}), "t.jsonl");
  ASSERT_EQ(doc.ops().size(), 2u);
  EXPECT_EQ(doc.ops()[0].collective, nullptr);
  ASSERT_NE(doc.ops()[1].collective, nullptr);
  EXPECT_EQ(doc.ops()[1].collective->name, "allreduce");
  EXPECT_EQ(doc.ops()[1].collective->process_group, "0");
  EXPECT_EQ(doc.ops()[1].collective->seq, 12u);
  const std::string written = candle_graph::write_jsonl_string(doc);
  EXPECT_THAT(written, HasSubstr(kCollective + "\n"));
  EXPECT_EQ(candle_graph::parse_trace_text(written, "t"), doc);
}

TEST(OpExtensions, AProcessGroupWithoutTheCollectiveIsRejectedAtItsLine) {
  std::string op = kCollective;
  op.erase(op.find(R"(,"collective":"allreduce")"),
           std::string(R"(,"collective":"allreduce")").size());
  expect_rejected(trace_with({op}), 3, HasSubstr("missing field `collective`"));
}

}  // namespace
