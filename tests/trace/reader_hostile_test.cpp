// Hostile input: every case ends in a clear `PATH:LINE: message` error or in a
// correct document — never a crash, a hang or a partial result.
#include "support/trace_lines.hpp"

namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::StartsWith;
using namespace cgtest;

// For inputs where only "rejected, at the right line" matters: the message just must say something.
const auto kAnyMessage = Not(IsEmpty());

std::string after_meta(const std::string& line) {
  return text_of({meta_line(), line});
}

std::string op_with_duration(const std::string& raw) {
  return R"({"kind":"op","span_id":"s1","op_name":"m","dtype":"f32","device":"cpu","duration_ns":)" +
         raw + "}";
}
std::string gradient_with_norm(const std::string& raw) {
  return R"({"kind":"gradient","event_id":"g","root":"vb","key":"k","state":"present","norm":)" +
         raw + "}";
}

TEST(ReaderHostile, NegativeNumbers) {
  expect_rejected(after_meta(op_with_duration("-1")), 2,
                  AllOf(HasSubstr("`duration_ns`"), HasSubstr("negative number -1")));
  expect_rejected(
      after_meta(
          R"({"kind":"span_start","id":"s1","name":"n","start_ns":-5,"span_kind":"function"})"),
      2, HasSubstr("`start_ns`"));
  expect_rejected(
      after_meta(
          R"({"kind":"op","span_id":"s1","op_name":"m","shape":[2,-3],"dtype":"f32","device":"cpu","duration_ns":1})"),
      2, HasSubstr("`shape`"));
}

// u64::MAX is the largest accepted value; one more is out of range.
TEST(ReaderHostile, IntegersAtAndBeyondU64) {
  const auto doc = parse_both(after_meta(op_with_duration("18446744073709551615")));
  EXPECT_EQ(doc.ops()[0].duration_ns, 18446744073709551615ull);
  expect_rejected(after_meta(op_with_duration("18446744073709551616")), 2,
                  HasSubstr("`duration_ns`"));
  expect_rejected(after_meta(op_with_duration("99999999999999999999999999999999999999")), 2,
                  HasSubstr("`duration_ns`"));
  expect_rejected(after_meta(op_with_duration(std::string(5000, '9'))), 2,
                  HasSubstr("`duration_ns`"));
}

// A huge integer inside an ignored field is valid JSON and therefore accepted.
TEST(ReaderHostile, HugeIntegerInAnIgnoredFieldIsAccepted) {
  const auto doc = parse_both(after_meta(
      R"({"kind":"edge","from_span":"a","to_span":"b","duration_ns":1,"big":123456789012345678901234567890,"neg":-5,"f":1e308})"));
  EXPECT_EQ(doc.edges().size(), 1u);
}

// NaN and Infinity are not JSON; 1e999 is JSON but not a finite f64 (serde rejects it too).
TEST(ReaderHostile, NanAndInfinity) {
  for (const char* bad : {"NaN", "nan", "Infinity", "-Infinity", "inf", "1e999", "-1e999"}) {
    SCOPED_TRACE(bad);
    expect_rejected(after_meta(gradient_with_norm(bad)), 2, kAnyMessage);
    expect_rejected(after_meta(op_with_duration(bad)), 2, kAnyMessage);
  }
}

TEST(ReaderHostile, FiniteExtremeNormsAreAccepted) {
  const auto doc = parse_both(
      text_of({meta_line(), gradient_with_norm("1.7976931348623157e308"),
               gradient_with_norm("5e-324"), gradient_with_norm("-0.0"), gradient_with_norm("3")}));
  EXPECT_EQ(doc.gradients()[0].norm, 1.7976931348623157e308);
  EXPECT_EQ(doc.gradients()[1].norm, 5e-324);
  EXPECT_EQ(doc.gradients()[2].norm, 0.0);
  EXPECT_EQ(doc.gradients()[3].norm, 3.0);  // an integer is a fine f64
}

TEST(ReaderHostile, InvalidUtf8) {
  // in a value, in a key, in an ignored field, a lone continuation byte, an overlong encoding,
  // an encoded surrogate
  for (const std::string& bad : std::vector<std::string>{
           std::string("\xff"), std::string("a\x80z"), std::string("\xc0\xaf"),
           std::string("\xed\xa0\x80"), std::string("\xf5\x80\x80\x80"), std::string("\xe2\x82")}) {
    SCOPED_TRACE(::testing::PrintToString(bad));
    expect_rejected(
        after_meta(R"({"kind":"edge","from_span":")" + bad + R"(","to_span":"b","duration_ns":1})"),
        2, HasSubstr("UTF-8"));
    expect_rejected(after_meta(R"({"kind":"edge",")" + bad +
                               R"(":1,"from_span":"a","to_span":"b","duration_ns":1})"),
                    2, HasSubstr("UTF-8"));
    expect_rejected(
        after_meta(R"({"kind":"edge","from_span":"a","to_span":"b","duration_ns":1,"x":[")" + bad +
                   R"("]})"),
        2, HasSubstr("UTF-8"));
  }
}

// Escapes that do not decode to a Unicode scalar value (serde_json rejects lone surrogates).
TEST(ReaderHostile, LoneSurrogateEscapes) {
  for (const char* bad :
       {R"(\ud800)", R"(\udc00)", R"(\ud800x)", R"(\ud800\u0041)", R"(\udfff\ud800)"}) {
    SCOPED_TRACE(bad);
    expect_rejected(after_meta(std::string(R"({"kind":"edge","from_span":")") + bad +
                               R"(","to_span":"b","duration_ns":1})"),
                    2, kAnyMessage);
  }
}

TEST(ReaderHostile, ValidEscapesDecode) {
  const auto doc = parse_both(after_meta(
      R"({"kind":"edge","from_span":"a\u0041\n\"\\\/\ud83d\ude00\u00e9","to_span":"\u2028","duration_ns":1})"));
  EXPECT_EQ(doc.edges()[0].from_span, "aA\n\"\\/\xF0\x9F\x98\x80\xC3\xA9");
  EXPECT_EQ(doc.edges()[0].to_span, "\xE2\x80\xA8");
}

TEST(ReaderHostile, BadEscapesAndRawControlCharacters) {
  for (const std::string& bad : std::vector<std::string>{
           std::string(R"(\x41)"), std::string(R"(\u12)"), std::string(R"(\U0041)"),
           std::string("a\tb"), std::string("a\x01") + "b", std::string(1, '\0')}) {
    SCOPED_TRACE(::testing::PrintToString(bad));
    expect_rejected(
        after_meta(R"({"kind":"edge","from_span":")" + bad + R"(","to_span":"b","duration_ns":1})"),
        2, kAnyMessage);
  }
}

TEST(ReaderHostile, BinaryGarbage) {
  std::mt19937 rng(42);
  for (int round = 0; round < 50; ++round) {
    std::string garbage(1 + rng() % 300, '\0');
    for (char& c : garbage) c = static_cast<char>(rng());
    // Keep it on one line so the expected line number is known; never start with whitespace
    // only (a blank line would be skipped).
    for (char& c : garbage)
      if (c == '\n' || c == '\r' || c == ' ' || c == '\t') c = 'x';
    SCOPED_TRACE(round);
    expect_rejected(meta_line() + "\n" + garbage + "\n" + meta_line() + "\n", 2, kAnyMessage);
  }
}

TEST(ReaderHostile, NulBytes) {
  expect_rejected(meta_line() + "\n" + std::string("\0\0\0", 3) + "\n", 2, kAnyMessage);
  expect_rejected(meta_line() + std::string("\0", 1) + "\n", 1, kAnyMessage);
  expect_rejected(
      after_meta(std::string(R"({"kind":"edge","from_span":"a","to_span":"b","duration_ns":1})") +
                 std::string("\0", 1)),
      2, kAnyMessage);
}

TEST(ReaderHostile, EmptyFile) {
  expect_rejected("", 0, "trace stream is missing a meta event with run metadata");
  expect_rejected("\n\n  \r\n\t\n", 0, "trace stream is missing a meta event with run metadata");
  expect_rejected("\xEF\xBB\xBF", 0, "trace stream is missing a meta event with run metadata");
}

TEST(ReaderHostile, NotAnObject) {
  for (const char* line : {"[1,2]", "\"meta\"", "42", "null", "true", "{", "}", "[", "{}x", ":"}) {
    SCOPED_TRACE(line);
    expect_rejected(after_meta(line), 2, kAnyMessage);
  }
}

TEST(ReaderHostile, EmptyObject) {
  expect_rejected(after_meta("{}"), 2, HasSubstr("missing field `kind`"));
}

// A trace cut in the middle of its last line (no newline): the last line is named.
TEST(ReaderHostile, TruncatedLastLine) {
  const std::string full = read_file(fixture("spec_example.jsonl"));
  const std::vector<std::string> lines = lines_of(full);
  std::string cut = full.substr(0, full.size() - 1);  // drop the final newline: still valid
  EXPECT_NO_THROW(parse_both(cut));
  // Every cut point inside the last line is an error on line 21.
  const std::string& last = lines.back();
  const std::size_t last_start = full.size() - 1 - last.size();
  for (std::size_t keep = 1; keep < last.size(); ++keep) {
    SCOPED_TRACE(keep);
    expect_rejected(full.substr(0, last_start + keep), 21, kAnyMessage);
  }
}

// Trailing garbage after the object, and a second object on the same line.
TEST(ReaderHostile, TrailingGarbageAfterTheObject) {
  const std::string edge = R"({"kind":"edge","from_span":"a","to_span":"b","duration_ns":1})";
  for (const std::string& tail :
       std::vector<std::string>{"x", "}", ",", "{}", edge, "\"s\"", "1", "//c", "\x01"}) {
    SCOPED_TRACE(tail);
    expect_rejected(after_meta(edge + tail), 2, kAnyMessage);
    expect_rejected(after_meta(edge + " " + tail), 2, kAnyMessage);
  }
  expect_rejected(meta_line() + meta_line() + "\n", 1, kAnyMessage);
}

// A value and a closing brace after the object (`{…}0}`). simdjson's stage 1 cuts a batch of
// lines into documents by depth, so such a line at the end of a batch was one document, and its
// last brace passed for the object's own: the line was accepted. Here on the meta line (a batch
// of its own: the fast scanner takes no meta line), in the middle and on the last line.
TEST(ReaderHostile, AValueAndABraceAfterTheObject) {
  const std::string edge = R"({"kind":"edge","from_span":"a","to_span":"b","duration_ns":1})";
  for (const std::string& tail :
       std::vector<std::string>{"0}", "x}", "\"s\"}", "[]}", " 0 }", "1,\"a\":2}", "{}}", "0]"}) {
    SCOPED_TRACE(tail);
    const auto invalid = StartsWith("invalid JSON");
    expect_rejected(text_of({meta_line() + tail, edge}), 1, invalid);
    expect_rejected(text_of({meta_line(), edge + tail, edge}), 2, invalid);
    expect_rejected(text_of({meta_line(), edge, edge + tail}), 3, invalid);
  }
}

// A value after the object without a closing brace (`{…}0`, `{…},`) is named for what it is:
// simdjson alone reports the line's object as one that "ended early", since it takes a root
// object to end at the line's last token. A line cut inside its object keeps that message.
TEST(ReaderHostile, AValueAfterTheObjectIsTrailingCharacters) {
  const std::string edge = R"({"kind":"edge","from_span":"a","to_span":"b","duration_ns":1})";
  for (const std::string& tail :
       std::vector<std::string>{"0", " 1", "\"s\"", "x", ",", "0 0", "[]", "true"}) {
    SCOPED_TRACE(tail);
    expect_rejected(text_of({meta_line() + tail, edge}), 1,
                    "invalid JSON: trailing characters after the event object");
    expect_rejected(text_of({meta_line(), edge + tail}), 2,
                    "invalid JSON: trailing characters after the event object");
  }
  expect_rejected(text_of({meta_line(), R"({"kind":"edge","from_span":"a",)"}), 2,
                  "invalid JSON: JSON document ended early in the middle of an object or array.");
}

// A stray closing bracket after the object (the last line of a JSON array cut into lines, `{…}]`)
// makes the line no stream of documents at all; it is still text after a whole object. An object
// that never closes keeps simdjson's own message, a string that never ends too.
TEST(ReaderHostile, AStrayBracketAfterTheObjectIsTrailingCharacters) {
  const std::string edge = R"({"kind":"edge","from_span":"a","to_span":"b","duration_ns":1})";
  for (const std::string& tail :
       std::vector<std::string>{"]", " ]", "0]", "x]", "0]]", "\"}\"]", "]}", "[", "{", "]0}"}) {
    SCOPED_TRACE(tail);
    expect_rejected(text_of({meta_line() + tail, edge}), 1,
                    "invalid JSON: trailing characters after the event object");
    expect_rejected(text_of({meta_line(), edge + tail}), 2,
                    "invalid JSON: trailing characters after the event object");
  }
  const std::string open = R"({"kind":"edge","extra":{"from_span":"a"})";
  expect_rejected(text_of({meta_line(), open + "]"}), 2,
                  "invalid JSON: JSON document ended early in the middle of an object or array.");
  expect_rejected(text_of({meta_line(), open + " ]"}), 2,
                  "invalid JSON: JSON document ended early in the middle of an object or array.");
  expect_rejected(text_of({meta_line(), edge + "\"]"}), 2, "invalid JSON: unterminated string");
}

// Unknown fields are ignored but must be valid JSON (serde parses them to skip them).
TEST(ReaderHostile, MalformedJsonInsideAnIgnoredField) {
  const std::string head =
      R"({"kind":"edge","from_span":"a","to_span":"b","duration_ns":1,"extra":)";
  for (const std::string& bad : std::vector<std::string>{
           R"({"a":[1,2,})", R"({"a" 1})", "tru", "nul", "[1 2]", "01", "1.", ".5", "-", "+1",
           R"("\x")", R"({"a":1,})", "[,]", R"({1:2})", "'s'", "1e", "[1,]", "NaN"}) {
    SCOPED_TRACE(bad);
    expect_rejected(after_meta(head + bad + "}"), 2, kAnyMessage);
    expect_rejected(after_meta(head + bad + R"(,"more":1})"), 2, kAnyMessage);
  }
}

// Unknown fields nested moderately deep are fine; absurdly deep nesting is a clear error.
TEST(ReaderHostile, DeeplyNestedUnknownFields) {
  const std::string head =
      R"({"kind":"edge","from_span":"a","to_span":"b","duration_ns":1,"extra":)";
  for (int depth : {1, 10, 100}) {
    std::string nested;
    for (int i = 0; i < depth; ++i) nested += (i % 2) ? R"({"k":)" : "[";
    nested += "0";
    for (int i = depth - 1; i >= 0; --i) nested += (i % 2) ? "}" : "]";
    SCOPED_TRACE(depth);
    EXPECT_NO_THROW(parse_both(after_meta(head + nested + "}")));
  }
  for (int depth : {2000, 100000, 1000000}) {
    SCOPED_TRACE(depth);
    expect_rejected(after_meta(head + std::string(depth, '[') + std::string(depth, ']') + "}"), 2,
                    HasSubstr("deep"));
    // Unbalanced (never closed) as well.
    expect_rejected(after_meta(head + std::string(depth, '[') + "}"), 2, kAnyMessage);
  }
}

// Deep nesting where a known field expects a scalar or a flat array.
TEST(ReaderHostile, DeeplyNestedKnownField) {
  expect_rejected(
      after_meta(
          R"({"kind":"op","span_id":"s","op_name":"m","dtype":"f32","device":"cpu","duration_ns":1,"shape":)" +
          std::string(50000, '[') + std::string(50000, ']') + "}"),
      2, kAnyMessage);
}

// A valid line of 100 MB (a span name), streamed from a real file: read correctly. The buffer
// grows for it; the lines after it still get the right numbers.
TEST(ReaderHostile, HundredMegabyteLine) {
  TempDir dir;
  const fs::path p = dir / "big.jsonl";
  const std::size_t name_size = 100u << 20;
  {
    std::ofstream out(p, std::ios::binary);
    out << meta_line() << "\n";
    out << R"({"kind":"span_start","id":"s1","name":")";
    const std::string block(1 << 20, 'n');
    for (std::size_t i = 0; i < name_size / block.size(); ++i) out << block;
    out << R"(","start_ns":0,"span_kind":"function","measured":true})"
        << "\n";
    out << R"({"kind":"telemetry"})"
        << "\n";
  }
  try {
    (void)candle_graph::parse_trace(p);
    FAIL() << "accepted";
  } catch (const candle_graph::Error& e) {
    EXPECT_EQ(std::string(e.what()), p.string() + R"(:3: unknown event kind "telemetry")");
  }
  // Without the bad last line the document is complete.
  fs::resize_file(p, fs::file_size(p) - std::string(R"({"kind":"telemetry"})").size() - 1);
  const candle_graph::TraceDocument doc = candle_graph::parse_trace(p);
  ASSERT_EQ(doc.spans().size(), 1u);
  EXPECT_EQ(doc.spans()[0].name.size(), name_size);
  EXPECT_EQ(doc.spans()[0].name.find_first_not_of('n'), std::string_view::npos);
}

// A 100 MB line that is broken at its very end still names its line.
TEST(ReaderHostile, HundredMegabyteBrokenLine) {
  TempDir dir;
  const fs::path p = dir / "big.jsonl";
  {
    std::ofstream out(p, std::ios::binary);
    out << meta_line() << "\n\n";
    out << R"({"kind":"edge","from_span":"a","to_span":"b","duration_ns":1,"pad":")";
    const std::string block(1 << 20, 'p');
    for (int i = 0; i < 100; ++i) out << block;
    out << "\"";  // the closing brace is missing
  }
  try {
    (void)candle_graph::parse_trace(p);
    FAIL() << "accepted";
  } catch (const candle_graph::Error& e) {
    EXPECT_THAT(std::string(e.what()), StartsWith(p.string() + ":3: "));
  }
}

TEST(ReaderHostile, MissingFileAndDirectory) {
  TempDir dir;
  try {
    (void)candle_graph::parse_trace(dir / "nope.jsonl");
    FAIL();
  } catch (const candle_graph::Error& e) {
    EXPECT_EQ(e.path(), (dir / "nope.jsonl").string());
    EXPECT_THAT(e.message(), HasSubstr("cannot open"));
  }
  try {
    (void)candle_graph::parse_trace(dir.path());
    FAIL();
  } catch (const candle_graph::Error& e) {
    EXPECT_EQ(e.path(), dir.path().string());
    EXPECT_THAT(e.message(), HasSubstr("directory"));
  }
}

// Lines around the reader's 4 MiB chunk boundaries: many lines, some straddling a boundary.
TEST(ReaderHostile, LinesStraddlingReadChunks) {
  std::string text = meta_line() + "\n";
  std::uint64_t n = 0;
  while (text.size() < (9u << 20)) {
    text += R"({"kind":"device_memory","timestamp_ns":)" + std::to_string(n) +
            R"(,"device":"cpu","used_bytes":1,"free_bytes":2,"pad":")" +
            std::string((n + 1) % 997, 'x') + "\"}\n";
    ++n;
  }
  text += "{\"kind\":\"bad\"}\n";
  expect_rejected(text, n + 2, R"(unknown event kind "bad")");
  text.resize(text.size() - std::string("{\"kind\":\"bad\"}\n").size());
  const auto doc = parse_both(text);
  ASSERT_EQ(doc.device_memory().size(), n);
  for (std::uint64_t i = 0; i < n; ++i) ASSERT_EQ(doc.device_memory()[i].timestamp_ns, i);
}

}  // namespace
