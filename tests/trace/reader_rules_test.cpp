// One negative test per validation rule of trace6.md §5 and §17.2–17.3: every rejection names the
// file and the 1-based line. Expected message texts are the ones the spec quotes for the original
// (trace6.md §5.2, trace6.md §17.2, §17.3), with the 0-based event index the original reports.
#include <nlohmann/json.hpp>

#include "support/trace_lines.hpp"

namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using namespace cgtest;

// A full line of every kind with every optional field present (values from trace6.md §4.11).
const std::string kFullMeta =
    R"({"kind":"meta","schema":"candle-graph/trace/6","run_id":"r","correlation_id":"c","entrypoint":"e","phase":"train","timestamp":"t","capture_step":1,"warmup_steps":0,"device":"cpu","measured_region_device_synchronized":true,"timing_mode":"host","tags":{"a":"b"},"candle_version":"0.11.0"})";
const std::string kFullSpanStart =
    R"({"kind":"span_start","id":"s2","parent_id":"s1","name":"n","start_ns":5,"span_kind":"module","measured":true,"step":"forward"})";
const std::string kFullSpanEnd = R"({"kind":"span_end","id":"s1","duration_ns":7})";
const std::string kFullOp =
    R"({"kind":"op","span_id":"s1","op_name":"matmul","inputs":["x","w"],"output":"h","shape":[8,64],"dtype":"f32","device":"cpu","duration_ns":3,"timestamp_ns":2,"storage_bytes":10,"input_storage_bytes":0})";
const std::string kFullTensor =
    R"({"kind":"tensor","span_id":"s1","tensor_id":"x","shape":[8,32],"dtype":"f32","device":"cpu","requires_grad":true,"storage_bytes":1,"category":"activation"})";
const std::string kFullMemory =
    R"({"kind":"memory","timestamp_ns":5,"tensor_id":"h","span_id":"s1","op_name":"matmul","device":"cpu","bytes":2048,"action":"alloc","shape":[8,64],"dtype":"f32","category":"gradient"})";
const std::string kFullDeviceMemory =
    R"({"kind":"device_memory","timestamp_ns":1,"device":"cpu","used_bytes":2,"free_bytes":3,"reserved_bytes":4})";
const std::string kFullGradient =
    R"({"kind":"gradient","event_id":"gradient-1","root":"vb","key":"encoder.weight","state":"present","norm":0.42})";
const std::string kFullEdge =
    R"({"kind":"edge","from_span":"s1","to_span":"s2","duration_ns":100})";

struct KindCase {
  std::string kind;
  std::string line;
  std::vector<std::string> required;
  std::vector<std::string> optional;
};

const std::vector<KindCase>& kind_cases() {
  static const std::vector<KindCase> cases = {
      {"meta",
       kFullMeta,
       {"schema", "run_id", "correlation_id", "entrypoint", "phase", "timestamp", "capture_step",
        "warmup_steps", "device", "timing_mode", "tags"},
       {"measured_region_device_synchronized", "candle_version"}},
      {"span_start",
       kFullSpanStart,
       {"id", "name", "start_ns", "span_kind"},
       {"parent_id", "measured", "step"}},
      {"span_end", kFullSpanEnd, {"id"}, {"duration_ns"}},
      {"op",
       kFullOp,
       {"span_id", "op_name", "dtype", "device", "duration_ns"},
       {"inputs", "output", "shape", "timestamp_ns", "storage_bytes", "input_storage_bytes"}},
      {"tensor",
       kFullTensor,
       {"span_id", "tensor_id", "dtype", "device"},
       {"shape", "requires_grad", "storage_bytes", "category"}},
      {"memory",
       kFullMemory,
       {"timestamp_ns", "tensor_id", "span_id", "device", "bytes", "action", "dtype"},
       {"op_name", "shape", "category"}},
      {"device_memory",
       kFullDeviceMemory,
       {"timestamp_ns", "device", "used_bytes", "free_bytes"},
       {"reserved_bytes"}},
      {"gradient", kFullGradient, {"event_id", "root", "key", "state"}, {"norm"}},
      {"edge", kFullEdge, {"from_span", "to_span", "duration_ns"}, {}},
  };
  return cases;
}

// The trace in which `line` is tested: meta + an open root span s1, then the line (so a
// span_end for s1 is legal); a meta line is tested on its own.
std::string context_for(const std::string& kind, const std::string& line) {
  if (kind == "meta") return line + "\n";
  return text_of({kFullMeta, span_start("s1", "", 0), line});
}
std::uint64_t line_number_for(const std::string& kind) {
  return kind == "meta" ? 1 : 3;
}

std::string without_field(const std::string& line, const std::string& field) {
  auto j = nlohmann::ordered_json::parse(line);
  EXPECT_EQ(j.erase(field), 1u) << field;
  return j.dump();
}

std::string with_field(const std::string& line, const std::string& field,
                       const std::string& raw_json_value) {
  auto j = nlohmann::ordered_json::parse(line);
  j[field] = nlohmann::ordered_json::parse(raw_json_value);
  return j.dump();
}

TEST(ReaderRules, EveryFullLineIsAccepted) {
  for (const auto& c : kind_cases()) {
    SCOPED_TRACE(c.kind);
    EXPECT_NO_THROW(parse_both(context_for(c.kind, c.line)));
  }
}

// trace6.md §5.2: meta must be the first non-empty record (§17.2 confirms 0.7.0 enforces it).
TEST(ReaderRules, MetaNotFirst) {
  expect_rejected(text_of({span_start("s1", "", 0), kFullMeta}), 2,
                  "meta event must be the first non-empty trace record, found at index 1");
}

// The index counts non-empty records; the line counts every line, blank ones included.
TEST(ReaderRules, MetaNotFirstAfterBlankLinesNamesTheFileLine) {
  expect_rejected("\n  \n" + span_start("s1", "", 0) + "\n\n" + kFullMeta + "\n", 5,
                  "meta event must be the first non-empty trace record, found at index 1");
}

TEST(ReaderRules, DuplicateMeta) {
  expect_rejected(text_of({kFullMeta, span_start("s1", "", 0), kFullMeta}), 3,
                  "duplicate meta event at index 2; only one meta record is allowed");
}

TEST(ReaderRules, WrongSchema) {
  std::string meta = kFullMeta;
  meta.replace(meta.find("trace/6"), 7, "trace/5");
  expect_rejected(
      text_of({meta}), 1,
      R"(unsupported trace schema "candle-graph/trace/5"; expected "candle-graph/trace/6")");
}

// Rust `{:?}` quoting of the schema: quotes and backslashes escaped.
TEST(ReaderRules, WrongSchemaIsQuotedLikeRustDebug) {
  const std::string meta = with_field(kFullMeta, "schema", R"("a\"b\\c")");
  expect_rejected(text_of({meta}), 1,
                  R"(unsupported trace schema "a\"b\\c"; expected "candle-graph/trace/6")");
}

TEST(ReaderRules, MissingMeta) {
  expect_rejected(text_of({span_start("s1", "", 0), span_end("s1", 1)}), 0,
                  "trace stream is missing a meta event with run metadata");
}

TEST(ReaderRules, DuplicateSpanStart) {
  expect_rejected(text_of({kFullMeta, span_start("s1", "", 0), span_start("s1", "", 5)}), 3,
                  "duplicate span_start id `s1` at index 2");
}

TEST(ReaderRules, SpanEndForUnknownSpan) {
  expect_rejected(text_of({kFullMeta, R"({"kind":"span_end","id":"nope","duration_ns":1})"}), 2,
                  "span_end for unknown span `nope` at index 1");
}

// "never started (so far)": a span_end before its span_start is unknown too.
TEST(ReaderRules, SpanEndBeforeItsStart) {
  expect_rejected(text_of({kFullMeta, span_end("s1", 1), span_start("s1", "", 0)}), 2,
                  "span_end for unknown span `s1` at index 1");
}

TEST(ReaderRules, DuplicateSpanEnd) {
  expect_rejected(
      text_of({kFullMeta, span_start("s1", "", 0), span_end("s1", 5), span_end("s1", 6)}), 4,
      "duplicate span_end for `s1` at index 3");
}

// The exact text the issue asks for.
TEST(ReaderRules, UnknownKindTelemetry) {
  expect_rejected(text_of({kFullMeta, R"({"kind":"telemetry","value":1})"}), 2,
                  R"(unknown event kind "telemetry")");
}

TEST(ReaderRules, UnknownKindIsNotCaseFolded) {
  expect_rejected(text_of({kFullMeta, R"({"kind":"Span_Start","id":"s1"})"}), 2,
                  R"(unknown event kind "Span_Start")");
}

TEST(ReaderRules, MissingKind) {
  expect_rejected(text_of({kFullMeta, R"({"id":"s1","duration_ns":1})"}), 2,
                  HasSubstr("missing field `kind`"));
}

TEST(ReaderRules, KindNotAString) {
  expect_rejected(text_of({kFullMeta, R"({"kind":7,"id":"s1"})"}), 2,
                  AllOf(HasSubstr("`kind`"), HasSubstr("expected a string")));
}

TEST(ReaderRules, DuplicateField) {
  expect_rejected(text_of({kFullMeta, span_start("s1", "", 0),
                           R"({"kind":"span_end","id":"s1","id":"s2","duration_ns":1})"}),
                  3, HasSubstr("duplicate field `id`"));
}

TEST(ReaderRules, DuplicateKindField) {
  expect_rejected(
      text_of({kFullMeta,
               R"({"kind":"edge","kind":"edge","from_span":"a","to_span":"b","duration_ns":1})"}),
      2, HasSubstr("duplicate field `kind`"));
}

// Every required field of every kind (trace6.md §4.2–4.10): removing it is an error naming the
// field.
TEST(ReaderRules, EveryRequiredFieldIsRequired) {
  for (const auto& c : kind_cases()) {
    for (const auto& field : c.required) {
      SCOPED_TRACE(c.kind + "." + field);
      expect_rejected(context_for(c.kind, without_field(c.line, field)), line_number_for(c.kind),
                      HasSubstr("missing field `" + field + "`"));
    }
  }
}

// Every optional field of every kind may be left out.
TEST(ReaderRules, EveryOptionalFieldIsOptional) {
  for (const auto& c : kind_cases()) {
    for (const auto& field : c.optional) {
      SCOPED_TRACE(c.kind + "." + field);
      EXPECT_NO_THROW(parse_both(context_for(c.kind, without_field(c.line, field))));
    }
  }
}

// A required field given as null is still an error (serde: Option only for optional fields).
TEST(ReaderRules, NullForARequiredFieldIsRejected) {
  for (const auto& c : kind_cases()) {
    for (const auto& field : c.required) {
      SCOPED_TRACE(c.kind + "." + field);
      expect_rejected(context_for(c.kind, with_field(c.line, field, "null")),
                      line_number_for(c.kind),
                      AllOf(HasSubstr("`" + field + "`"), HasSubstr("found null")));
    }
  }
}

struct TypeCase {
  std::string kind;
  std::string line;
  std::string field;
  std::string bad_value;
};

TEST(ReaderRules, WrongTypes) {
  const std::vector<TypeCase> cases = {
      {"meta", kFullMeta, "run_id", "5"},
      {"meta", kFullMeta, "capture_step", R"("1")"},
      {"meta", kFullMeta, "warmup_steps", "true"},
      {"meta", kFullMeta, "measured_region_device_synchronized", R"("false")"},
      {"meta", kFullMeta, "tags", "[]"},
      {"meta", kFullMeta, "tags", R"({"batch":8})"},
      {"meta", kFullMeta, "phase", "0"},
      {"span_start", kFullSpanStart, "start_ns", "true"},
      {"span_start", kFullSpanStart, "measured", "1"},
      {"span_start", kFullSpanStart, "parent_id", "7"},
      {"span_start", kFullSpanStart, "name", "{}"},
      {"span_start", kFullSpanStart, "step", "[]"},
      {"span_end", kFullSpanEnd, "duration_ns", R"("7")"},
      {"op", kFullOp, "inputs", R"("x")"},
      {"op", kFullOp, "inputs", "[1]"},
      {"op", kFullOp, "shape", R"([8,"64"])"},
      {"op", kFullOp, "shape", R"({"a":1})"},
      {"op", kFullOp, "shape", "[[8]]"},
      {"op", kFullOp, "duration_ns", "1.5"},
      {"op", kFullOp, "duration_ns", "1e3"},
      {"op", kFullOp, "duration_ns", "1.0"},
      {"op", kFullOp, "output", "false"},
      {"op", kFullOp, "storage_bytes", R"("10")"},
      {"tensor", kFullTensor, "requires_grad", R"("yes")"},
      {"tensor", kFullTensor, "category", "1"},
      {"memory", kFullMemory, "bytes", R"("2048")"},
      {"memory", kFullMemory, "op_name", "[]"},
      {"device_memory", kFullDeviceMemory, "used_bytes", R"("1")"},
      {"device_memory", kFullDeviceMemory, "reserved_bytes", "{}"},
      {"gradient", kFullGradient, "norm", R"("0.4")"},
      {"gradient", kFullGradient, "norm", "true"},
      {"edge", kFullEdge, "duration_ns", "[]"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.kind + "." + c.field + " = " + c.bad_value);
    expect_rejected(context_for(c.kind, with_field(c.line, c.field, c.bad_value)),
                    line_number_for(c.kind),
                    HasSubstr("invalid type for field `" + c.field + "` in " + c.kind + " event"));
  }
}

// Non-Option fields with a serde default (measured, shape, inputs, requires_grad, category)
// accept absence but not null, like serde.
TEST(ReaderRules, NullForADefaultedNonOptionalFieldIsRejected) {
  const std::vector<std::pair<std::string, std::string>> cases = {{kFullSpanStart, "measured"},
                                                                  {kFullOp, "inputs"},
                                                                  {kFullOp, "shape"},
                                                                  {kFullTensor, "shape"},
                                                                  {kFullTensor, "requires_grad"},
                                                                  {kFullTensor, "category"},
                                                                  {kFullMemory, "category"},
                                                                  {kFullMemory, "shape"}};
  for (const auto& [line, field] : cases) {
    const std::string kind = nlohmann::json::parse(line)["kind"];
    SCOPED_TRACE(kind + "." + field);
    expect_rejected(context_for(kind, with_field(line, field, "null")), 3,
                    AllOf(HasSubstr("`" + field + "`"), HasSubstr("found null")));
  }
}

struct EnumCase {
  std::string kind;
  std::string line;
  std::string field;
  std::string bad;
};

// trace6.md §3: the wire accepts exactly the lower snake_case strings (aliases are for humans
// only).
TEST(ReaderRules, BadEnumStrings) {
  const std::vector<EnumCase> cases = {
      {"meta", kFullMeta, "phase", "training"},
      {"meta", kFullMeta, "phase", "Train"},
      {"meta", kFullMeta, "timing_mode", "device-synchronized"},
      {"span_start", kFullSpanStart, "span_kind", "Function"},
      {"span_start", kFullSpanStart, "step", "fwd"},
      {"span_start", kFullSpanStart, "step", ""},
      {"tensor", kFullTensor, "category", "weights"},
      {"memory", kFullMemory, "action", "release"},
      {"memory", kFullMemory, "category", "Gradient"},
      {"gradient", kFullGradient, "state", "nonfinite"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.kind + "." + c.field + " = " + c.bad);
    expect_rejected(context_for(c.kind, with_field(c.line, c.field, "\"" + c.bad + "\"")),
                    line_number_for(c.kind),
                    AllOf(HasSubstr("invalid value for field `" + c.field + "` in " + c.kind),
                          HasSubstr("unknown variant \"" + c.bad + "\"")));
  }
}

// An absurdly long bad enum string is shortened in the message, not echoed whole.
TEST(ReaderRules, LongBadEnumStringIsTruncatedInTheMessage) {
  const std::string bad(10000, 'x');
  try {
    (void)candle_graph::parse_trace_text(
        context_for("gradient", with_field(kFullGradient, "state", "\"" + bad + "\"")),
        "trace.jsonl");
    FAIL() << "accepted";
  } catch (const candle_graph::Error& e) {
    EXPECT_LT(e.message().size(), 300u) << e.message();
    EXPECT_EQ(e.line(), 3u);
  }
}

// trace6.md §17.3: the trace/5 `param_key` alias is gone; such a line fails with missing field
// `key`.
TEST(ReaderRules, ParamKeyWithoutKey) {
  expect_rejected(
      text_of(
          {kFullMeta,
           R"({"kind":"gradient","event_id":"gradient-1","root":"vb","param_key":"encoder.weight","state":"present"})"}),
      2, HasSubstr("missing field `key`"));
}

// trace6.md §4.9: a trace/5 `step` field on a gradient is simply ignored.
TEST(ReaderRules, GradientStepFieldIsIgnored) {
  const auto doc = parse_both(text_of({kFullMeta, with_field(kFullGradient, "step", "3")}));
  ASSERT_EQ(doc.gradients().size(), 1u);
  EXPECT_EQ(doc.gradients()[0].key, "encoder.weight");
}

// The first error wins: a later bad line is never reached.
TEST(ReaderRules, FirstErrorWins) {
  expect_rejected(text_of({kFullMeta, R"({"kind":"telemetry"})", R"({"kind":"nope"})"}), 2,
                  R"(unknown event kind "telemetry")");
}

// trace6.md §14: meta + spans + op + memory + edge + gradient + span_ends → 2 closed spans, 1 op
// whose storage_bytes was derived (32×32 f32 = 4096), 1 memory event, 1 edge, 1 gradient.
TEST(ReaderRules, ChecklistDocumentParses) {
  const auto doc = parse_both(text_of({
      meta_line(),
      span_start("root", "", 0, true),
      span_start("enc", "root", 10),
      R"({"kind":"op","span_id":"enc","op_name":"matmul","inputs":["x"],"output":"y","shape":[32,32],"dtype":"f32","device":"cpu","duration_ns":5})",
      R"({"kind":"memory","timestamp_ns":12,"tensor_id":"y","span_id":"enc","device":"cpu","bytes":4096,"action":"alloc","dtype":"f32"})",
      R"({"kind":"edge","from_span":"root","to_span":"enc","duration_ns":3})",
      R"({"kind":"gradient","event_id":"gradient-1","root":"vb","key":"w","state":"present","norm":1.5})",
      span_end("enc", 20),
      span_end("root", 100),
  }));
  ASSERT_EQ(doc.spans().size(), 2u);
  EXPECT_TRUE(doc.spans()[0].closed);
  EXPECT_TRUE(doc.spans()[1].closed);
  ASSERT_EQ(doc.ops().size(), 1u);
  EXPECT_EQ(doc.ops()[0].storage_bytes, std::optional<std::uint64_t>(4096));
  EXPECT_EQ(doc.memory().size(), 1u);
  EXPECT_EQ(doc.edges().size(), 1u);
  EXPECT_EQ(doc.gradients().size(), 1u);
  EXPECT_EQ(doc.event_count(), 9u);  // non-empty lines
}

// Open spans are not a parse error (trace6.md §5.2): they are health's business.
TEST(ReaderRules, OpenSpanParses) {
  const auto doc = parse_both(text_of({meta_line(), span_start("s1", "", 0)}));
  ASSERT_EQ(doc.spans().size(), 1u);
  EXPECT_FALSE(doc.spans()[0].closed);
  EXPECT_EQ(doc.spans()[0].duration_ns, 0u);
}

// compatibility.md: spans keep stream (start) order, not id order (s10 stays after s2).
TEST(ReaderRules, SpansKeepStreamOrder) {
  const auto doc = parse_both(text_of({meta_line(), span_start("s2", "", 0),
                                       span_start("s10", "s2", 1), span_start("s1", "s2", 2)}));
  ASSERT_EQ(doc.spans().size(), 3u);
  EXPECT_EQ(doc.spans()[0].id, "s2");
  EXPECT_EQ(doc.spans()[1].id, "s10");
  EXPECT_EQ(doc.spans()[2].id, "s1");
}

// References to spans that start later are resolved at the end (derived links).
TEST(ReaderRules, ForwardReferencesAreResolved) {
  const auto doc = parse_both(text_of({
      meta_line(),
      R"({"kind":"op","span_id":"late","op_name":"m","dtype":"f32","device":"cpu","duration_ns":1})",
      R"({"kind":"tensor","span_id":"late","tensor_id":"t","dtype":"f32","device":"cpu"})",
      R"({"kind":"memory","timestamp_ns":1,"tensor_id":"t","span_id":"late","device":"cpu","bytes":1,"action":"alloc","dtype":"f32"})",
      span_start("child", "late", 1),
      span_start("late", "", 0),
  }));
  EXPECT_EQ(doc.op_span()[0], 1u);
  EXPECT_EQ(doc.tensor_span()[0], 1u);
  EXPECT_EQ(doc.memory_span()[0], 1u);
  EXPECT_EQ(doc.span_parent()[0], 1u);
  EXPECT_EQ(doc.span_parent()[1], candle_graph::kNoIndex);
  EXPECT_EQ(doc.find_span("nope"), candle_graph::kNoIndex);
}

// Defaults of trace6.md §4 when optional fields are absent.
TEST(ReaderRules, DefaultsOfAbsentOptionalFields) {
  const auto doc = parse_both(text_of({
      R"({"kind":"meta","schema":"candle-graph/trace/6","run_id":"r","correlation_id":"c","entrypoint":"e","phase":"infer","timestamp":"t","capture_step":2,"warmup_steps":1,"device":"cpu","timing_mode":"device_synchronized","tags":{}})",
      R"({"kind":"span_start","id":"s1","name":"n","start_ns":0,"span_kind":"op"})",
      R"({"kind":"span_end","id":"s1"})",
      R"({"kind":"op","span_id":"s1","op_name":"m","dtype":"f32","device":"cpu","duration_ns":1})",
      R"({"kind":"tensor","span_id":"s1","tensor_id":"t","dtype":"bf16","device":"cpu"})",
      R"({"kind":"memory","timestamp_ns":1,"tensor_id":"t","span_id":"s1","device":"cpu","bytes":1,"action":"free","dtype":"f32"})",
      R"({"kind":"device_memory","timestamp_ns":1,"device":"cpu","used_bytes":1,"free_bytes":2})",
      R"({"kind":"gradient","event_id":"g","root":"vb","key":"k","state":"zero"})",
  }));
  using namespace candle_graph;
  EXPECT_FALSE(doc.run().measured_region_device_synchronized);
  EXPECT_EQ(doc.run().timing_mode, TimingMode::device_synchronized);
  EXPECT_EQ(doc.run().phase, ExecutionPhase::infer);
  EXPECT_FALSE(doc.run().candle_version.has_value());
  EXPECT_TRUE(doc.run().tags.empty());
  const SpanRecord& s = doc.spans()[0];
  EXPECT_FALSE(s.parent_id.has_value());
  EXPECT_FALSE(s.measured);
  EXPECT_FALSE(s.step.has_value());
  EXPECT_EQ(s.kind, SpanKind::op);
  EXPECT_TRUE(s.closed);
  EXPECT_EQ(s.duration_ns, 0u);
  const OpEvent& o = doc.ops()[0];
  EXPECT_TRUE(o.inputs.empty());
  EXPECT_FALSE(o.output.has_value());
  EXPECT_TRUE(o.shape.empty());
  EXPECT_EQ(o.timestamp_ns, 0u);
  EXPECT_EQ(o.storage_bytes,
            std::optional<std::uint64_t>(4));  // scalar f32 (trace6.md §4.12 quirk)
  EXPECT_FALSE(o.input_storage_bytes.has_value());
  const TensorEvent& t = doc.tensors()[0];
  EXPECT_FALSE(t.requires_grad);
  EXPECT_EQ(t.category, MemoryCategory::other);
  EXPECT_EQ(t.storage_bytes, std::optional<std::uint64_t>(2));  // scalar bf16
  const MemoryEvent& m = doc.memory()[0];
  EXPECT_FALSE(m.op_name.has_value());
  EXPECT_TRUE(m.shape.empty());
  EXPECT_EQ(m.category, MemoryCategory::other);
  EXPECT_EQ(m.action, MemoryAction::free);
  EXPECT_FALSE(doc.device_memory()[0].reserved_bytes.has_value());
  EXPECT_FALSE(doc.gradients()[0].norm.has_value());
  EXPECT_EQ(doc.gradients()[0].state, GradientState::zero);
}

// trace6.md §5.2: explicit storage_bytes wins over shape × dtype, even when it disagrees (or is 0).
TEST(ReaderRules, ExplicitStorageBytesWin) {
  const auto doc = parse_both(text_of({
      meta_line(),
      R"({"kind":"op","span_id":"s","op_name":"m","shape":[4],"dtype":"f32","device":"cpu","duration_ns":1,"storage_bytes":0})",
      R"({"kind":"op","span_id":"s","op_name":"m","shape":[4],"dtype":"f32","device":"cpu","duration_ns":1,"storage_bytes":7})",
      R"({"kind":"op","span_id":"s","op_name":"m","shape":[4],"dtype":"f32","device":"cpu","duration_ns":1,"storage_bytes":null})",
      R"({"kind":"tensor","span_id":"s","tensor_id":"t","shape":[4],"dtype":"f8e4m3","device":"cpu"})",
      R"({"kind":"tensor","span_id":"s","tensor_id":"t","shape":[4],"dtype":"f16","device":"cpu","storage_bytes":99})",
  }));
  EXPECT_EQ(doc.ops()[0].storage_bytes, std::optional<std::uint64_t>(0));
  EXPECT_EQ(doc.ops()[1].storage_bytes, std::optional<std::uint64_t>(7));
  EXPECT_EQ(doc.ops()[2].storage_bytes, std::optional<std::uint64_t>(16));
  EXPECT_EQ(doc.tensors()[0].storage_bytes, std::optional<std::uint64_t>(0));  // unknown dtype
  EXPECT_EQ(doc.tensors()[1].storage_bytes, std::optional<std::uint64_t>(99));
}

// Tags are a map: a repeated key keeps the last value (serde map semantics), output sorted.
TEST(ReaderRules, TagsAreSortedAndLastDuplicateWins) {
  // Built by hand: a JSON library would already collapse the duplicate key.
  std::string meta = kFullMeta;
  const std::string old_tags = R"("tags":{"a":"b"})";
  meta.replace(meta.find(old_tags), old_tags.size(), R"("tags":{"z":"1","a":"2","m":"3","a":"4"})");
  const auto doc = parse_both(text_of({meta}));
  ASSERT_EQ(doc.run().tags.size(), 3u);
  EXPECT_EQ(doc.run().tags[0].key, "a");
  EXPECT_EQ(doc.run().tags[0].value, "4");
  EXPECT_EQ(doc.run().tags[1].key, "m");
  EXPECT_EQ(doc.run().tags[2].key, "z");
}

// from_events applies the same trace6.md §5.2 rules to events built in memory (line = event
// number).
TEST(ReaderRules, FromEventsValidatesToo) {
  using namespace candle_graph;
  MetaEvent meta;
  meta.schema = kTraceSchema;
  std::vector<TraceEvent> events = {
      meta, SpanStartEvent{"s1", std::nullopt, "n", 0, SpanKind::function, true, std::nullopt},
      SpanEndEvent{"s1", 5}, SpanEndEvent{"s1", 6}};
  try {
    (void)TraceDocument::from_events(events, "mem");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "mem:4: duplicate span_end for `s1` at index 3");
  }
  events.pop_back();
  const TraceDocument doc = TraceDocument::from_events(events, "mem");
  EXPECT_EQ(doc.spans().size(), 1u);
  EXPECT_EQ(doc.spans()[0].duration_ns, 5u);
}

}  // namespace
