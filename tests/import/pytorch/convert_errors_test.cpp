// Inputs that are not PyTorch traces get one clear error naming the file (and the byte offset
// when the JSON is malformed), and no output file is written.
#include "support/convert_helpers.hpp"

namespace cgimport {
namespace {

TEST(ConvertErrors, NotAPyTorchTrace) {
  TempDir dir;
  EXPECT_TRUE(has(convert_error(dir, "a.json", R"({"foo": 1})"), "no traceEvents array"));
  EXPECT_TRUE(has(convert_error(dir, "b.json", "42"), "not a PyTorch profiler trace"));
  EXPECT_TRUE(has(convert_error(dir, "c.json", ""), "empty file"));
  EXPECT_TRUE(
      has(convert_error(dir, "d.json", R"({"traceEvents": {}})"), "traceEvents is not an array"));
  // A candle-graph trace/6 file is JSONL, not a profiler trace.
  const std::string e = convert_error(
      dir, "trace.jsonl",
      "{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/6\"}\n{\"kind\":\"span_start\"}\n");
  EXPECT_TRUE(has(e, "not a PyTorch profiler trace: a second JSON value")) << e;
  EXPECT_TRUE(has(convert_error(dir, "e.json", R"({"traceEvents": [{"ph":"M","name":"x"}]})"),
                  "no operator, annotation, kernel or ProfilerStep"));
  EXPECT_TRUE(has(convert_error(dir, "f.json", R"({"traceEvents": [1, 2]})"), "not an object"));
}

TEST(ConvertErrors, MalformedJsonNamesTheByteOffset) {
  TempDir dir;
  // The second event is broken: `"ts": ,` . It starts at byte 66 (counted by hand: the prefix
  // `{"traceEvents": [` is 17 bytes, the first event 47, then ", " 2).
  const std::string text =
      R"({"traceEvents": [{"ph":"X","name":"aten::mm","ts":1,"dur":2,"cat":"cpu_op"}, {"ph":"X","ts": ,"name":"x"}]})";
  const std::size_t second = text.find("{\"ph\":\"X\",\"ts\"");
  const std::string e = convert_error(dir, "bad.json", text);
  EXPECT_TRUE(has(e, "malformed JSON")) << e;
  EXPECT_TRUE(has(e, "at byte " + std::to_string(second))) << e;
  const std::string t = convert_error(dir, "trunc.json", text.substr(0, 60));
  EXPECT_TRUE(has(t, "truncated")) << t;
  const std::string m = convert_error(dir, "mismatch.json", R"({"traceEvents": [}])");
  EXPECT_TRUE(has(m, "at byte 17")) << m;
}

TEST(ConvertErrors, HostileInput) {
  TempDir dir;
  // Invalid UTF-8 in a name: simdjson rejects the event; the error names its offset (17).
  const std::string bad_utf8 =
      std::string(R"({"traceEvents": [{"ph":"X","cat":"cpu_op","name":"a)") + "\xff" +
      R"(","ts":1,"dur":1}]})";
  EXPECT_TRUE(has(convert_error(dir, "utf8.json", bad_utf8), "at byte 17"));
  // 2000 nested arrays inside an event: refused by the scanner, not a stack overflow.
  const std::string deep =
      R"({"traceEvents": [{"args":)" + std::string(2000, '[') + std::string(2000, ']') + "}]}";
  EXPECT_TRUE(has(convert_error(dir, "deep.json", deep), "deeper than 1024"));
  // A timestamp beyond any clock and control characters in a name: the event with the huge ts
  // is skipped and counted, the name is escaped in the output, and the trace stays trusted.
  const Converted c = convert_and_read(
      dir.write("odd.json",
                R"({"traceEvents": [{"ph":"X","cat":"cpu_op","name":"aten::mm","ts":1e300,"dur":1},
{"ph":"X","cat":"cpu_op","name":"tab\there\u0001","ts":5,"dur":1}]})"),
      dir / "t.jsonl");
  EXPECT_TRUE(c.health.trusted) << error_codes(c.health);
  EXPECT_EQ(c.tag("convert.skipped_malformed_events"), "1");
  ASSERT_EQ(c.doc.ops().size(), 1u);
  EXPECT_EQ(c.doc.ops()[0].op_name, "tab\there\x01");
}

// A string after the top-level value is not JSON either (found by fuzz_pytorch_stream: the
// scanner refused any other byte there, but a string went unchecked and the trace converted).
// The fixture is the fuzzer's input: a legacy array cut from a fixture, then `"x"`; the offset
// expected is the file size minus those 3 bytes.
TEST(ConvertErrors, StringAfterTheValueIsRefused) {
  TempDir dir;
  const fs::path fuzzed = fs::path(CG_FIXTURE_DIR) / "pytorch/fuzz/string-after-the-array.json";
  const std::string text = slurp(fuzzed);
  ASSERT_EQ(text.substr(text.size() - 4), "]\"x\"");
  const std::string e = convert_error(dir, "fuzzed.json", text);
  EXPECT_TRUE(has(e, "unexpected data after the end of the JSON value at byte " +
                         std::to_string(text.size() - 3)))
      << e;
  const std::string k = convert_error(dir, "kineto.json", R"({"traceEvents": []} "tail")");
  EXPECT_TRUE(has(k, "unexpected data after the end of the JSON value at byte 20")) << k;
  const std::string l = convert_error(dir, "lead.json", R"("head" {"traceEvents": []})");
  EXPECT_TRUE(has(l, "not a PyTorch profiler trace")) << l;
}

TEST(ConvertErrors, RefusesToOverwriteItsInput) {
  TempDir dir;
  const fs::path in = dir.write("x.json", R"([{"name":"aten::mm","ph":"X","ts":1,"dur":1}])");
  EXPECT_THROW(candle_graph::import::convert_pytorch_trace(in, in), candle_graph::Error);
  EXPECT_EQ(slurp(in), R"([{"name":"aten::mm","ph":"X","ts":1,"dur":1}])");
}

// The bare-array form: legacy events, string pid, a missing closing `]` (Chrome accepts it).
TEST(ConvertErrors, LegacyArrayWithoutClosingBracketIsRepaired) {
  TempDir dir;
  const Converted c = convert_and_read(
      dir.write(
          "legacy.json",
          R"([{"name": "ProfilerStep#1", "ph": "X", "ts": 10, "dur": 100, "tid": 1, "pid": "CPU functions", "args": {}},
{"name": "aten::addmm", "ph": "X", "ts": 20, "dur": 30, "tid": 1, "pid": "CPU functions", "args": {}},
{"name": "my block", "ph": "X", "ts": 15, "dur": 50, "tid": 1, "pid": "CPU functions", "args": {}},
{"name": "AddmmBackward0", "ph": "X", "ts": 70, "dur": 5, "tid": 2, "pid": "CPU functions", "args": {}},
)"),
      dir / "t.jsonl");
  EXPECT_TRUE(c.health.trusted) << error_codes(c.health);
  EXPECT_EQ(c.result.format, "legacy-autograd-profiler");
  EXPECT_EQ(c.tag("convert.repaired_missing_array_end"), "1");
  EXPECT_EQ(c.doc.ops().size(), 2u);
  EXPECT_EQ(c.doc.spans().size(), 3u);  // root, ProfilerStep#1, "my block"
}

}  // namespace
}  // namespace cgimport
