// trace6.md §5.3 writer: the original's field order and omission rules (lines of canonical fixtures
// re-serialize byte-identically), to_events order, and parse(write(doc)) == doc.
#include "support/trace_lines.hpp"
#include "synth/synthetic_trace.hpp"
#include "trace/document_editor.hpp"

namespace {

using namespace cgtest;
using namespace candle_graph;

std::string reserialize_line(const std::string& line) {
  Arena arena;
  const TraceEvent e = parse_event_line(line, arena, "line", 1);
  std::string out;
  append_event_json(out, e);
  return out;
}

// Fixtures written by hand in the canonical serde form (declaration order of trace6.md §4, absent
// options omitted, serde_json escaping and ryu floats): each line must come back byte for byte.
class CanonicalFixture : public ::testing::TestWithParam<const char*> {};

TEST_P(CanonicalFixture, EveryLineReserializesByteIdentically) {
  const std::string text = read_file(fixture(GetParam()));
  const auto lines = lines_of(text);
  ASSERT_FALSE(lines.empty());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    SCOPED_TRACE("line " + std::to_string(i + 1));
    EXPECT_EQ(reserialize_line(lines[i]), lines[i]);
  }
}

INSTANTIATE_TEST_SUITE_P(Writer, CanonicalFixture,
                         ::testing::Values("spec_example.jsonl", "inference_all_fields.jsonl"));

// The whole trace6.md §4.11 document written back: §5.3 order (meta, each span_start followed by
// its span_end, then ops, tensors, memory, device_memory, gradients, edges). The expected text is
// assembled from the example's own lines (1-based numbers below, read off the spec listing);
// op and tensor lines gain the storage_bytes resolved at parse time (trace6.md §5.2): [8,64] f32 =
// 2048, [64,32] f32 = 8192, [8,32] f32 = 1024.
TEST(Writer, SpecExampleDocumentInToEventsOrder) {
  const std::string text = read_file(fixture("spec_example.jsonl"));
  const auto l = lines_of(text);
  ASSERT_EQ(l.size(), 21u);
  auto L = [&](int n) { return l[static_cast<std::size_t>(n - 1)]; };
  auto insert_before = [](std::string s, std::string_view anchor, std::string_view what) {
    const std::size_t pos = s.find(anchor);
    EXPECT_NE(pos, std::string::npos);
    s.insert(pos, what);
    return s;
  };
  const std::string op1 =
      insert_before(L(6), R"("input_storage_bytes")", R"("storage_bytes":2048,)");
  const std::string op2 = insert_before(L(15), "}", R"(,"storage_bytes":8192)");
  const std::string tensor = insert_before(L(5), R"("category")", R"("storage_bytes":1024,)");
  const std::string expected =
      join_lines({L(1), L(2), L(21),  L(3), L(19), L(4),  L(8),  L(9),  L(12), L(14), L(18),
                  op1,  op2,  tensor, L(7), L(10), L(11), L(16), L(20), L(17), L(13)});
  const TraceDocument doc = parse_trace_text(text, "spec");
  EXPECT_EQ(write_jsonl_string(doc), expected);
  // to_events gives the same sequence.
  std::string via_events;
  for (const TraceEvent& e : to_events(doc)) {
    append_event_json(via_events, e);
    via_events.push_back('\n');
  }
  EXPECT_EQ(via_events, expected);
}

// Open spans are written without a span_end (trace6.md §5.3 "if closed").
TEST(Writer, OpenSpanHasNoSpanEnd) {
  const TraceDocument doc = parse_trace_text(text_of(
      {meta_line(), span_start("s1", "", 0, true), span_start("s2", "s1", 1), span_end("s2", 0)}));
  const auto out = lines_of(write_jsonl_string(doc));
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[1], span_start("s1", "", 0, true));
  EXPECT_EQ(out[2], span_start("s2", "s1", 1));
  EXPECT_EQ(out[3], span_end("s2", 0));
}

void expect_round_trip(const TraceDocument& doc) {
  const std::string once = write_jsonl_string(doc);
  const TraceDocument again = parse_trace_text(once, "written");
  EXPECT_TRUE(again == doc);
  EXPECT_EQ(write_jsonl_string(again), once);  // the written form is a fixed point
}

// parse(write(doc)) == doc for every trace fixture in tests/fixtures.
TEST(Writer, RoundTripEveryFixture) {
  int n = 0;
  for (const auto& entry : fs::directory_iterator(CG_FIXTURE_DIR)) {
    if (entry.path().extension() != ".jsonl") continue;
    SCOPED_TRACE(entry.path().filename().string());
    expect_round_trip(parse_trace(entry.path()));
    ++n;
  }
  EXPECT_GE(n, 3);
}

TEST(Writer, RoundTripSynthTraces) {
  for (std::uint64_t seed : {1u, 2u, 3u, 4u, 99u}) {
    SCOPED_TRACE(seed);
    std::string text;
    synth::generate({.layers = 9, .ops_per_span = 3, .seed = seed},
                    [&](std::string_view s) { text.append(s); });
    expect_round_trip(parse_trace_text(text, "synth"));
  }
}

// Strings that need escaping survive the trip through the writer and the reader.
TEST(Writer, RoundTripHostileStrings) {
  std::string all_controls;
  for (int c = 1; c < 0x20; ++c) all_controls.push_back(static_cast<char>(c));
  const std::vector<std::string> names = {all_controls,
                                          "\"quoted\"",
                                          "back\\slash",
                                          "\xE2\x80\xA8\xE2\x80\xA9",
                                          "\x7f",
                                          "</script>",
                                          "\xF0\x9F\x98\x80 \xC3\xA9",
                                          std::string("nul\0byte", 8),
                                          "",
                                          std::string(70000, 'x')};
  TraceDocument doc;
  {
    std::string text = meta_line() + "\n";
    text += span_start("root", "", 0, true) + "\n" + span_end("root", 10) + "\n";
    doc = parse_trace_text(text, "base");
  }
  DocumentEditor edit(doc);
  for (const std::string& name : names) {
    SpanRecord s = doc.spans()[0];
    s.id = edit.arena().copy(std::string("id-") + std::to_string(doc.spans().size()) + name);
    s.name = edit.arena().copy(name);
    s.parent_id = doc.spans()[0].id;
    s.start_ns = 1;
    s.duration_ns = 1;
    s.measured = false;
    edit.spans().push_back(s);
  }
  edit.reindex();
  expect_round_trip(doc);
}

// write_jsonl goes through a temp file + rename and creates parent directories.
TEST(Writer, WriteJsonlToFile) {
  TempDir dir;
  const TraceDocument doc = parse_trace(fixture("spec_example.jsonl"));
  const fs::path target = dir / "a" / "b" / "trace.jsonl";
  write_jsonl(target, doc);
  EXPECT_EQ(read_file(target), write_jsonl_string(doc));
  EXPECT_TRUE(parse_trace(target) == doc);
  // Overwrite in place: still complete, no temp files left next to it.
  write_jsonl(target, doc);
  int files = 0;
  for (const auto& e : fs::directory_iterator(target.parent_path())) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 1);
}

TEST(Writer, WriteJsonlIntoMissingParentThatIsAFileFailsCleanly) {
  TempDir dir;
  write_file(dir / "plain", "x");
  const TraceDocument doc = parse_trace(fixture("spec_example.jsonl"));
  try {
    write_jsonl(dir / "plain" / "trace.jsonl", doc);
    FAIL() << "wrote below a regular file";
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), (dir / "plain" / "trace.jsonl").string());
  }
}

// Documents built in memory: the writer's omission rules for every optional field.
TEST(Writer, OmitsAbsentOptionalsAndWritesPresentOnes) {
  std::string out;
  append_event_json(
      out, SpanStartEvent{"s", std::nullopt, "n", 1, SpanKind::module, false, std::nullopt});
  EXPECT_EQ(
      out,
      R"({"kind":"span_start","id":"s","name":"n","start_ns":1,"span_kind":"module","measured":false})");
  out.clear();
  append_event_json(out,
                    SpanStartEvent{"s", "p", "n", 1, SpanKind::op, true, ExecutionStep::optimizer});
  EXPECT_EQ(
      out,
      R"({"kind":"span_start","id":"s","parent_id":"p","name":"n","start_ns":1,"span_kind":"op","measured":true,"step":"optimizer"})");
  out.clear();
  append_event_json(out, DeviceMemoryEvent{5, "cuda:1", 1, 2, std::nullopt});
  EXPECT_EQ(
      out,
      R"({"kind":"device_memory","timestamp_ns":5,"device":"cuda:1","used_bytes":1,"free_bytes":2})");
  out.clear();
  append_event_json(out, GradientEvent{"g", "r", "k", GradientState::non_finite, std::nullopt});
  EXPECT_EQ(out, R"({"kind":"gradient","event_id":"g","root":"r","key":"k","state":"non_finite"})");
  out.clear();
  append_event_json(out, EdgeEvent{"a", "b", 18446744073709551615ull});
  EXPECT_EQ(out,
            R"({"kind":"edge","from_span":"a","to_span":"b","duration_ns":18446744073709551615})");
}

// Tags built in memory out of order are written sorted by key (BTreeMap on the wire).
TEST(Writer, TagsAreWrittenSorted) {
  const Tag tags[] = {{"z", "1"}, {"a", "2"}, {"m", "3"}};
  MetaEvent meta;
  meta.schema = kTraceSchema;
  meta.run.tags = tags;
  std::string out;
  append_event_json(out, meta);
  EXPECT_NE(out.find(R"("tags":{"a":"2","m":"3","z":"1"})"), std::string::npos) << out;
}

// A non-finite norm built in memory is written as null (serde_json), and reads back as absent.
TEST(Writer, NonFiniteNormIsWrittenAsNull) {
  std::string out;
  append_event_json(out, GradientEvent{"g", "r", "k", GradientState::non_finite,
                                       std::numeric_limits<double>::quiet_NaN()});
  EXPECT_EQ(
      out,
      R"({"kind":"gradient","event_id":"g","root":"r","key":"k","state":"non_finite","norm":null})");
  Arena arena;
  const TraceEvent back = parse_event_line(out, arena);
  EXPECT_FALSE(std::get<GradientEvent>(back).norm.has_value());
}

TEST(Writer, EventKindNames) {
  EXPECT_EQ(event_kind_name(MetaEvent{}), "meta");
  EXPECT_EQ(event_kind_name(SpanStartEvent{}), "span_start");
  EXPECT_EQ(event_kind_name(SpanEndEvent{}), "span_end");
  EXPECT_EQ(event_kind_name(OpEvent{}), "op");
  EXPECT_EQ(event_kind_name(TensorEvent{}), "tensor");
  EXPECT_EQ(event_kind_name(MemoryEvent{}), "memory");
  EXPECT_EQ(event_kind_name(DeviceMemoryEvent{}), "device_memory");
  EXPECT_EQ(event_kind_name(GradientEvent{}), "gradient");
  EXPECT_EQ(event_kind_name(EdgeEvent{}), "edge");
}

// parse_event_line: one line, no document rules, views owned by the caller's arena.
TEST(Writer, ParseEventLineOwnsItsStrings) {
  Arena arena;
  TraceEvent e;
  {
    std::string line =
        R"(  {"kind":"op","span_id":"s1","op_name":"m","inputs":["a","b"],"output":"o","shape":[1,2],"dtype":"f32","device":"cpu","duration_ns":1}  )";
    e = parse_event_line(line, arena, "x", 7);
    line.assign(line.size(), '#');  // the event must not view the caller's buffer
  }
  const OpEvent& op = std::get<OpEvent>(e);
  EXPECT_EQ(op.span_id, "s1");
  ASSERT_EQ(op.inputs.size(), 2u);
  EXPECT_EQ(op.inputs[1], "b");
  EXPECT_EQ(op.output, std::optional<std::string_view>("o"));
  EXPECT_EQ(op.shape[1], 2u);
  EXPECT_FALSE(op.storage_bytes.has_value());  // no trace6.md §5.2 resolution for a lone line
  try {
    (void)parse_event_line("   ", arena, "x", 7);
    FAIL();
  } catch (const Error& err) {
    EXPECT_EQ(err.line(), 7u);
  }
  try {
    (void)parse_event_line(R"({"kind":"nope"})", arena, "x", 9);
    FAIL();
  } catch (const Error& err) {
    EXPECT_STREQ(err.what(), R"(x:9: unknown event kind "nope")");
  }
}

}  // namespace
