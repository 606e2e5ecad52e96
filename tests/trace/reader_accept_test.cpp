// Inputs the reader must accept (trace6.md §4.1 framing): CRLF line ends, blank
// lines, a UTF-8 BOM, unknown extra fields, null for optional fields — each gives the same document
// as the plain trace6.md §4.11 example.
#include "support/trace_lines.hpp"

namespace {

using namespace cgtest;
using candle_graph::TraceDocument;

std::string example_text() {
  return read_file(fixture("spec_example.jsonl"));
}
TraceDocument example_doc() {
  return parse_both(example_text());
}

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  for (std::size_t pos = s.find(from); pos != std::string::npos;
       pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
  return s;
}

TEST(ReaderAccepts, SpecExample) {
  const TraceDocument doc = example_doc();
  EXPECT_EQ(doc.event_count(), 21u);
  EXPECT_EQ(doc.spans().size(), 5u);
  EXPECT_EQ(doc.ops().size(), 2u);
  EXPECT_EQ(doc.tensors().size(), 1u);
  EXPECT_EQ(doc.memory().size(), 4u);
  EXPECT_EQ(doc.device_memory().size(), 1u);
  EXPECT_EQ(doc.gradients().size(), 1u);
  EXPECT_EQ(doc.edges().size(), 1u);
  EXPECT_EQ(doc.run().entrypoint, "demo::train::update");
  EXPECT_EQ(doc.run().tags.size(), 2u);
  // Derived at parse time (trace6.md §5.2): [8,64] f32 → 2048, [64,32] f32 → 8192, [8,32] f32 →
  // 1024.
  EXPECT_EQ(doc.ops()[0].storage_bytes, std::optional<std::uint64_t>(2048));
  EXPECT_EQ(doc.ops()[1].storage_bytes, std::optional<std::uint64_t>(8192));
  EXPECT_EQ(doc.tensors()[0].storage_bytes, std::optional<std::uint64_t>(1024));
  EXPECT_EQ(doc.gradients()[0].norm, 0.42);
}

TEST(ReaderAccepts, CrlfLineEnds) {
  EXPECT_TRUE(parse_both(replace_all(example_text(), "\n", "\r\n")) == example_doc());
}

// Only the "\n" splits lines; a stray "\r" at the end is whitespace, any other ASCII space too.
TEST(ReaderAccepts, TrailingAndLeadingWhitespace) {
  std::string text;
  for (const auto& line : lines_of(example_text())) text += " \t" + line + " \r\t \n";
  EXPECT_TRUE(parse_both(text) == example_doc());
}

TEST(ReaderAccepts, BlankLines) {
  std::string text = "\n\n   \n\t\r\n";
  for (const auto& line : lines_of(example_text())) text += line + "\n\n \n";
  const TraceDocument doc = parse_both(text);
  EXPECT_TRUE(doc == example_doc());
  EXPECT_EQ(doc.event_count(), 21u);  // events, not lines
}

// After blank lines an error still names the file line (1-based, blank lines counted).
TEST(ReaderAccepts, BlankLinesCountForErrorLines) {
  expect_rejected("\n\n" + meta_line() + "\n\n\r\n{\"kind\":\"telemetry\"}\n", 6,
                  R"(unknown event kind "telemetry")");
  expect_rejected(meta_line() + "\r\n\r\n{\"kind\":\"telemetry\"}\r\n", 3,
                  R"(unknown event kind "telemetry")");
}

TEST(ReaderAccepts, Utf8Bom) {
  EXPECT_TRUE(parse_both("\xEF\xBB\xBF" + example_text()) == example_doc());
  // An error on the first line after the BOM is still line 1.
  expect_rejected("\xEF\xBB\xBF{\"kind\":\"telemetry\"}\n", 1, R"(unknown event kind "telemetry")");
}

// A BOM anywhere but at the very start is not whitespace.
TEST(ReaderAccepts, BomInTheMiddleIsRejected) {
  const auto lines = lines_of(example_text());
  expect_rejected(lines[0] + "\n\xEF\xBB\xBF" + lines[1] + "\n", 2,
                  ::testing::Not(::testing::IsEmpty()));
}

// Unknown fields of every JSON type, before, between and after known fields, are ignored.
TEST(ReaderAccepts, UnknownExtraFields) {
  const std::string extra =
      R"("x_str":"v","x_num":-1.5e3,"x_big":123456789012345678901234567890,"x_bool":true,"x_null":null,"x_arr":[1,"a",{"b":[null,false]}],"x_obj":{"kind":"telemetry","id":"zz","nested":{"deep":[[[]]]}})";
  std::string text;
  for (const auto& line : lines_of(example_text())) {
    // {"kind":...,REST} → {EXTRA,"kind":...,EXTRA,REST-without-brace,EXTRA}
    const std::size_t first_comma = line.find(',');
    text += "{" + extra + "," + line.substr(1, first_comma) + extra + "," +
            line.substr(first_comma + 1, line.size() - first_comma - 2) + "," + extra + "}\n";
  }
  EXPECT_TRUE(parse_both(text) == example_doc());
}

// Field order does not matter (the kind may come last).
TEST(ReaderAccepts, KindLastAndFieldsShuffled) {
  const TraceDocument shuffled = parse_both(text_of({
      R"({"tags":{"b":"2","a":"1"},"timing_mode":"host","device":"cpu","warmup_steps":0,"capture_step":1,"timestamp":"t","phase":"train","entrypoint":"e","correlation_id":"c","run_id":"r","schema":"candle-graph/trace/6","kind":"meta"})",
      R"({"measured":true,"span_kind":"op","start_ns":3,"name":"n","id":"s1","kind":"span_start"})",
      R"({"duration_ns":4,"id":"s1","kind":"span_end"})",
  }));
  const TraceDocument ordered = parse_both(text_of({
      R"({"kind":"meta","schema":"candle-graph/trace/6","run_id":"r","correlation_id":"c","entrypoint":"e","phase":"train","timestamp":"t","capture_step":1,"warmup_steps":0,"device":"cpu","timing_mode":"host","tags":{"a":"1","b":"2"}})",
      R"({"kind":"span_start","id":"s1","name":"n","start_ns":3,"span_kind":"op","measured":true})",
      R"({"kind":"span_end","id":"s1","duration_ns":4})",
  }));
  EXPECT_TRUE(shuffled == ordered);
  EXPECT_EQ(shuffled.spans()[0].duration_ns, 4u);
}

TEST(ReaderAccepts, NullForOptionalFields) {
  const std::string with_nulls = text_of({
      R"({"kind":"meta","schema":"candle-graph/trace/6","run_id":"r","correlation_id":"c","entrypoint":"e","phase":"train","timestamp":"t","capture_step":1,"warmup_steps":0,"device":"cpu","measured_region_device_synchronized":false,"timing_mode":"host","tags":{},"candle_version":null})",
      R"({"kind":"span_start","id":"s1","parent_id":null,"name":"n","start_ns":0,"span_kind":"function","measured":true,"step":null})",
      R"({"kind":"op","span_id":"s1","op_name":"m","inputs":[],"output":null,"shape":[2],"dtype":"f32","device":"cpu","duration_ns":1,"timestamp_ns":0,"storage_bytes":null,"input_storage_bytes":null})",
      R"({"kind":"memory","timestamp_ns":1,"tensor_id":"t","span_id":"s1","op_name":null,"device":"cpu","bytes":1,"action":"alloc","shape":[],"dtype":"f32","category":"other"})",
      R"({"kind":"device_memory","timestamp_ns":1,"device":"cpu","used_bytes":1,"free_bytes":2,"reserved_bytes":null})",
      R"({"kind":"gradient","event_id":"g","root":"vb","key":"k","state":"missing","norm":null})",
      R"({"kind":"span_end","id":"s1","duration_ns":9})",
  });
  const std::string without = text_of({
      R"({"kind":"meta","schema":"candle-graph/trace/6","run_id":"r","correlation_id":"c","entrypoint":"e","phase":"train","timestamp":"t","capture_step":1,"warmup_steps":0,"device":"cpu","timing_mode":"host","tags":{}})",
      R"({"kind":"span_start","id":"s1","name":"n","start_ns":0,"span_kind":"function","measured":true})",
      R"({"kind":"op","span_id":"s1","op_name":"m","shape":[2],"dtype":"f32","device":"cpu","duration_ns":1})",
      R"({"kind":"memory","timestamp_ns":1,"tensor_id":"t","span_id":"s1","device":"cpu","bytes":1,"action":"alloc","dtype":"f32"})",
      R"({"kind":"device_memory","timestamp_ns":1,"device":"cpu","used_bytes":1,"free_bytes":2})",
      R"({"kind":"gradient","event_id":"g","root":"vb","key":"k","state":"missing"})",
      R"({"kind":"span_end","id":"s1","duration_ns":9})",
  });
  const TraceDocument a = parse_both(with_nulls);
  const TraceDocument b = parse_both(without);
  EXPECT_TRUE(a == b);
  EXPECT_FALSE(a.spans()[0].parent_id.has_value());
  EXPECT_FALSE(a.ops()[0].output.has_value());
  EXPECT_EQ(a.ops()[0].storage_bytes, std::optional<std::uint64_t>(8));
}

// Whitespace inside the JSON and escaped field names are plain JSON: accepted.
TEST(ReaderAccepts, InnerWhitespaceAndEscapedKeys) {
  const std::string spaced = text_of({
      meta_line(),
      "{ \"kind\" : \"edge\" ,\t\"from_span\":\"a\" , \"to_span\" :\"b\",\"duration_ns\" : 5 }",
      R"({"kind":"edge","\u0066rom_span":"a","to_span":"b","duration_ns":5})",
  });
  const TraceDocument doc = parse_both(spaced);
  ASSERT_EQ(doc.edges().size(), 2u);
  EXPECT_EQ(doc.edges()[1].from_span, "a");
  EXPECT_TRUE(doc.edges()[0] == doc.edges()[1]);
}

TEST(ReaderAccepts, Utf8ContentIsKeptVerbatim) {
  const TraceDocument doc = parse_both(text_of({
      meta_line(),
      R"({"kind":"span_start","id":"σ1","name":"模型/前向 🚀 \u2028","start_ns":0,"span_kind":"module","measured":true})",
  }));
  EXPECT_EQ(doc.spans()[0].id, "σ1");
  EXPECT_EQ(doc.spans()[0].name, "模型/前向 🚀 \xE2\x80\xA8");
}

// A document stays valid after being moved (its views point into its own arena).
TEST(ReaderAccepts, DocumentSurvivesMoves) {
  TraceDocument a = example_doc();
  TraceDocument b = std::move(a);
  std::vector<TraceDocument> docs;
  docs.push_back(std::move(b));
  docs.emplace_back(example_doc());
  docs.emplace_back(example_doc());
  EXPECT_TRUE(docs[0] == docs[2]);
  EXPECT_EQ(docs[0].spans()[2].name, "demo/update-000000000001/forward");
  EXPECT_EQ(docs[0].find_span("s4"), 3u);
}

}  // namespace
