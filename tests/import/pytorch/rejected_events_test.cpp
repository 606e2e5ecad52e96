// Every event the importer drops or repairs for a bad value is counted by reason, in the meta
// tags and the convert report; when nothing usable is left, the error names the reasons and the
// byte offset of the first rejected event instead of only saying that nothing was found.
// Inputs are small and hand-made: each expected count is the number of events written with that
// defect, and each offset is found in the text by std::string::find (not by the importer).
#include "support/convert_helpers.hpp"

namespace cgimport {
namespace {

TEST(RejectedEvents, NothingUsableLeftNamesTheReasonAndTheFirstOffset) {
  TempDir dir;
  // Three cpu_op events whose `ts` is beyond what fits in int64 ns (1e300 µs): all three dropped.
  const std::string text =
      R"({"traceEvents": [{"ph":"X","cat":"cpu_op","name":"a","ts":1e300,"dur":1},)"
      R"({"ph":"X","cat":"cpu_op","name":"b","ts":2e300,"dur":1},)"
      R"({"ph":"X","cat":"cpu_op","name":"c","ts":3e300,"dur":1}]})";
  const std::size_t first = text.find("{\"ph\"");
  const std::string e = convert_error(dir, "range.json", text);
  EXPECT_TRUE(
      has(e, "3 of 3 events rejected: ts out of range (3), e.g. byte " + std::to_string(first)))
      << e;
}

TEST(RejectedEvents, SeveralReasonsAreListedWithTheFirstOne) {
  TempDir dir;
  // One event without a name, one with a ts that is not a number, one without ph, and one
  // metadata event that is not rejected (so 3 of 4). The first rejected one is the nameless.
  const std::string text = R"({"traceEvents": [{"ph":"M","name":"process_name","pid":1},)"
                           R"({"ph":"X","cat":"cpu_op","ts":1,"dur":1},)"
                           R"({"ph":"X","cat":"cpu_op","name":"b","ts":"soon","dur":1},)"
                           R"({"cat":"cpu_op","name":"c","ts":3,"dur":1}]})";
  const std::size_t nameless = text.find("{\"ph\":\"X\",\"cat\":\"cpu_op\",\"ts\":1");
  const std::string e = convert_error(dir, "mixed.json", text);
  EXPECT_TRUE(has(e,
                  "3 of 4 events rejected: missing name (1), missing ph (1), ts not a "
                  "number (1), e.g. byte " +
                      std::to_string(nameless) + " (missing name)"))
      << e;
}

TEST(RejectedEvents, AnEmptyNameIsANameAndANumberIsNone) {
  TempDir dir;
  // Two ops named "" (kept, as a Chrome viewer shows them) and one whose name is a number (no
  // name: dropped as missing_name), counted from the text below.
  const std::string text = R"({"traceEvents": [)"
                           R"({"ph":"X","cat":"cpu_op","name":"","ts":1,"dur":5},)"
                           R"({"ph":"X","cat":"cpu_op","name":"","ts":10,"dur":5},)"
                           R"({"ph":"X","cat":"cpu_op","name":7,"ts":20,"dur":5}]})";
  const fs::path in = dir.write("names.json", text);
  const Converted c = convert_and_read(in, dir / "out.jsonl");
  EXPECT_EQ(c.tag("convert.rejected.missing_name"), "1");
  std::size_t unnamed = 0;
  for (const auto& op : c.doc.ops()) unnamed += op.op_name.empty();
  EXPECT_EQ(unnamed, 2u);
}

TEST(RejectedEvents, ChromeExportWithoutUsableSpansSaysWhy) {
  TempDir dir;
  // Our Chrome export's one span, with a ts beyond int64 ns: rejected, so no span is left.
  const std::string text =
      R"({"traceEvents":[{"ph":"X","cat":"span","name":"root","ts":1e300,"dur":1,"pid":1,)"
      R"("tid":1,"args":{"span_id":"s1"}}],"otherData":{"schema":"candle-graph/chrome/1"}})";
  const std::size_t first = text.find("{\"ph\"");
  const std::string e = convert_error(dir, "export.json", text);
  EXPECT_TRUE(has(e,
                  "candle-graph Chrome export without span events (1 of 1 events rejected: "
                  "ts out of range (1), e.g. byte " +
                      std::to_string(first) + ")"))
      << e;
}

TEST(RejectedEvents, CountedByReasonInTheTagsAndTheReport) {
  TempDir dir;
  // Two good ops; then, each written once: a negative dur and a dur of "inf" (both repaired:
  // read as 0 and kept), a ts of "nan" (non-finite, dropped), an op without ts (dropped), a flow
  // with a non-numeric id (kept under its own number) and a runtime call whose correlation is
  // not a number (kept, links nothing).
  const std::string text = R"({"traceEvents": [)"
                           R"({"ph":"X","cat":"cpu_op","name":"good1","ts":1,"dur":5},)"
                           R"({"ph":"X","cat":"cpu_op","name":"good2","ts":10,"dur":5},)"
                           R"({"ph":"X","cat":"cpu_op","name":"neg","ts":20,"dur":-5},)"
                           R"({"ph":"X","cat":"cpu_op","name":"inf","ts":21,"dur":"inf"},)"
                           R"({"ph":"X","cat":"cpu_op","name":"nan","ts":"nan","dur":1},)"
                           R"({"ph":"X","cat":"cpu_op","name":"nots","dur":1},)"
                           R"({"ph":"s","cat":"ac2g","name":"f","ts":2,"id":"abc"},)"
                           R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","ts":3,)"
                           R"("dur":1,"args":{"correlation":"x"}}]})";
  const fs::path in = dir.write("counts.json", text);
  const Converted c = convert_and_read(in, dir / "out.jsonl");
  EXPECT_EQ(c.tag("convert.repaired.negative_dur"), "1");
  EXPECT_EQ(c.tag("convert.repaired.dur_non_finite"), "1");
  EXPECT_EQ(c.tag("convert.rejected.ts_non_finite"), "1");
  EXPECT_EQ(c.tag("convert.rejected.missing_ts"), "1");
  EXPECT_EQ(c.tag("convert.repaired.non_numeric_flow_id"), "1");
  EXPECT_EQ(c.tag("convert.repaired.non_numeric_correlation"), "1");
  // The older totals keep their names: 2 zeroed durations, 2 skipped events.
  EXPECT_EQ(c.tag("convert.zeroed_negative_or_unreadable_durations"), "2");
  EXPECT_EQ(c.tag("convert.skipped_malformed_events"), "2");
  // What the command prints comes from the same report.
  std::map<std::string, std::uint64_t> report(c.result.repairs.begin(), c.result.repairs.end());
  EXPECT_EQ(report["convert.rejected.ts_non_finite"], 1u);
  EXPECT_EQ(report["convert.repaired.negative_dur"], 1u);
}

}  // namespace
}  // namespace cgimport
