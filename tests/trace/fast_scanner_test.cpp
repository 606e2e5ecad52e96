// The reader's fast scanner (src/trace/fast_line_scanner.cpp) takes the lines our writer emits
// without simdjson and bails out on everything else, which then goes through the exact simdjson
// path. What must hold: whatever the scanner accepts, the simdjson path (parse_event_line, which
// never uses the scanner) accepts too with an equal event; everything off the canonical form
// bails out, so its result (event or error message) is the simdjson path's, as before the
// scanner existed. The expected events come from parse_event_line, the expected documents from
// TraceDocument::from_events over those events — both independent of the scanner.
#include <bit>
#include <cstdio>
#include <cstring>
#include <memory>

#include "support/trace_lines.hpp"
#include "synth/synthetic_trace.hpp"
#include "trace/fast_line_scanner.hpp"

namespace {

using candle_graph::Arena;
using candle_graph::FastLineScanner;
using candle_graph::TraceDocument;
using candle_graph::TraceEvent;
using namespace cgtest;
using Kind = FastLineScanner::Kind;

// Scans `line` + "\n" followed by the 64 readable bytes the scanner may look at. The event views
// `buf` and the scanner's buffers: valid until the next scan.
struct Scanned {
  Kind kind;
  std::size_t consumed;  // bytes up to and including the '\n'
  TraceEvent event;
  std::unique_ptr<std::string> buf;
};
Scanned scan(FastLineScanner& s, std::string_view line, char fill = ' ') {
  auto buf = std::make_unique<std::string>(line);
  *buf += '\n';
  const std::size_t size = buf->size();
  buf->append(64, fill);
  const FastLineScanner::Result r = s.scan(buf->data());
  if (r.kind == Kind::none) return {Kind::none, 0, candle_graph::MetaEvent{}, std::move(buf)};
  const auto consumed = static_cast<std::size_t>(r.next - buf->data());
  EXPECT_LE(consumed, size);
  return {r.kind, consumed, s.event(r.kind), std::move(buf)};
}

// parse_event_line: the simdjson path alone.
std::optional<TraceEvent> slow(std::string_view line, Arena& arena) {
  try {
    return candle_graph::parse_event_line(line, arena);
  } catch (const candle_graph::Error&) {
    return std::nullopt;
  }
}

const std::string kOp =
    R"({"kind":"op","span_id":"s4","op_name":"matmul","inputs":["input","layer0.weight"],"output":"t1","shape":[8,128],"dtype":"f32","device":"cpu","duration_ns":111299,"timestamp_ns":6136,"storage_bytes":4096,"input_storage_bytes":8192})";
const std::string kMemory =
    R"({"kind":"memory","timestamp_ns":117435,"tensor_id":"t1","span_id":"s4","op_name":"matmul","device":"cpu","bytes":4096,"action":"alloc","shape":[8,128],"dtype":"f32","category":"activation"})";

// One canonical line of every kind the scanner takes, with and without its optional fields.
const std::vector<std::string> kCanonical = {
    kOp,
    kMemory,
    R"({"kind":"op","span_id":"s","op_name":"x","inputs":[],"shape":[],"dtype":"f32","device":"cpu","duration_ns":0,"timestamp_ns":18446744073709551})",
    R"({"kind":"op","span_id":"s","op_name":"x","inputs":["a"],"shape":[0],"dtype":"f32","device":"cpu","duration_ns":9999999999999999999,"timestamp_ns":1,"input_storage_bytes":0})",
    R"({"kind":"memory","timestamp_ns":1,"tensor_id":"","span_id":"s","device":"cuda:0","bytes":0,"action":"free","shape":[1,2,3],"dtype":"bf16","category":"other"})",
    R"({"kind":"span_start","id":"s1","name":"root","start_ns":0,"span_kind":"function","measured":false})",
    R"({"kind":"span_start","id":"s3","parent_id":"s2","name":"a b/~!","start_ns":2607,"span_kind":"module","measured":true,"step":"backward"})",
    R"({"kind":"span_end","id":"s3","duration_ns":1234})",
    R"({"kind":"tensor","span_id":"s4","tensor_id":"layer0.weight","shape":[128,128],"dtype":"f32","device":"cpu","requires_grad":true,"storage_bytes":65536,"category":"parameter"})",
    R"({"kind":"tensor","span_id":"s4","tensor_id":"x","shape":[],"dtype":"f32","device":"cpu","requires_grad":false,"category":"gradient"})",
    R"({"kind":"device_memory","timestamp_ns":2607,"device":"cpu","used_bytes":2147483648,"free_bytes":66571993088})",
    R"({"kind":"device_memory","timestamp_ns":1,"device":"cuda:0","used_bytes":1,"free_bytes":2,"reserved_bytes":3})",
    R"({"kind":"gradient","event_id":"gradient-1","root":"model","key":"layer0.weight","state":"present","norm":93.416})",
    R"({"kind":"gradient","event_id":"g","root":"model","key":"k","state":"missing"})",
    R"({"kind":"gradient","event_id":"g","root":"model","key":"k","state":"zero","norm":0})",
    R"({"kind":"edge","from_span":"s1","to_span":"s2","duration_ns":5})",
    // strings longer than the scanner's 16-byte steps, one with a DEL (0x7F, valid JSON)
    R"({"kind":"span_start","id":"s9","name":"synth/update-000000000003/forward/layer0/block1","start_ns":1,"span_kind":"module","measured":false})",
    "{\"kind\":\"span_end\",\"id\":\"0123456789abcdef0123456789abcdef\x7f\",\"duration_ns\":1}",
};

TEST(FastScanner, TakesEveryCanonicalLineWithTheSimdjsonEvent) {
  FastLineScanner s;
  Arena arena;
  for (const std::string& line : kCanonical) {
    SCOPED_TRACE(line);
    const Scanned got = scan(s, line);
    ASSERT_NE(got.kind, Kind::none);
    EXPECT_EQ(got.consumed, line.size() + 1);
    const auto want = slow(line, arena);
    ASSERT_TRUE(want.has_value());
    EXPECT_TRUE(got.event == *want);
    // The same line with a CRLF end.
    const Scanned crlf = scan(s, line + "\r");
    EXPECT_EQ(crlf.kind, got.kind);
    EXPECT_EQ(crlf.consumed, line.size() + 2);
  }
}

TEST(FastScanner, OptionalFieldsAreResetBetweenLines) {
  // Omitted optionals must not keep the previous line's values (the scanner reuses its events).
  FastLineScanner s;
  Arena arena;
  for (const std::string& line : kCanonical) (void)scan(s, line);
  for (auto it = kCanonical.rbegin(); it != kCanonical.rend(); ++it) {
    SCOPED_TRACE(*it);
    const Scanned got = scan(s, *it);
    const auto want = slow(*it, arena);
    ASSERT_TRUE(want.has_value());
    EXPECT_TRUE(got.event == *want);
  }
}

// Replaces the first `from` in `line` by `to` (the test fails if `from` is absent).
std::string edit(std::string line, std::string_view from, std::string_view to) {
  const std::size_t at = line.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) line.replace(at, from.size(), to);
  return line;
}

TEST(FastScanner, BailsOutOnEverythingOffTheCanonicalForm) {
  // Each of these is valid or invalid JSON that only the simdjson path may judge.
  const std::vector<std::string> off = {
      // field order, unknown, duplicated, missing, null fields
      edit(kOp, R"("span_id":"s4","op_name":"matmul")", R"("op_name":"matmul","span_id":"s4")"),
      edit(kMemory, R"("timestamp_ns":117435,"tensor_id":"t1")",
           R"("tensor_id":"t1","timestamp_ns":117435)"),
      R"({"op_name":"matmul","kind":"op","span_id":"s4","inputs":[],"shape":[],"dtype":"f32","device":"cpu","duration_ns":1,"timestamp_ns":1})",
      edit(kOp, R"(,"input_storage_bytes":8192})", R"(,"input_storage_bytes":8192,"extra":1})"),
      edit(kOp, R"("inputs")", R"("extra":{"a":[1,{"b":null}]},"inputs")"),
      edit(kMemory, R"(,"bytes":4096)", R"(,"bytes":4096,"bytes":4096)"),
      edit(kOp, R"("dtype":"f32",)", ""),
      edit(kMemory, R"(,"category":"activation")", ""),
      edit(kOp, R"("output":"t1")", R"("output":null)"),
      edit(kMemory, R"("op_name":"matmul")", R"("op_name":null)"),
      edit(kOp, R"(,"storage_bytes":4096)", R"(,"storage_bytes":null)"),
      // strings: escapes, non-ASCII (valid or not), control bytes
      edit(kOp, R"("matmul")", R"("mat\u006dul")"),
      edit(kOp, R"("matmul")", R"("mat\"mul")"),
      edit(kMemory, R"("t1")", R"("t\\1")"),
      edit(kOp, R"("matmul")", "\"mat\xC3\xA9mul\""),
      edit(kOp, R"("matmul")", "\"mat\xFFmul\""),
      edit(kOp, R"("matmul")", "\"mat\x01mul\""),
      edit(kOp, R"("input")", "\"in\tput\""),
      // the same past the first 16 and 32 bytes of a string
      edit(kOp, R"("input")", R"("0123456789abcdef0123\n")"),
      edit(kOp, R"("input")", "\"0123456789abcdef0123456789abcdef\xC3\xA9\""),
      edit(kOp, R"("input")", "\"0123456789abcdef\x1F\""),
      // numbers: beyond 19 digits, beyond u64, leading zeros, signs, fractions, exponents
      edit(kOp, "111299", "12345678901234567890"),
      edit(kOp, "111299", "18446744073709551616"),
      edit(kMemory, "4096", "04096"),
      edit(kMemory, "117435", "-117435"),
      edit(kMemory, "117435", "117435.0"),
      edit(kMemory, "117435", "1e5"),
      edit(kOp, "[8,128]", "[8,-1]"),
      edit(kOp, "[8,128]", "[8,1.5]"),
      edit(kOp, "[8,128]", "[8,\"128\"]"),
      edit(kOp, R"(["input","layer0.weight"])", R"(["input",1])"),
      edit(kOp, "111299", "\"111299\""),
      // enums and kinds
      edit(kMemory, R"("alloc")", R"("Alloc")"),
      edit(kMemory, R"("activation")", R"("activations")"),
      edit(kOp, R"("kind":"op")", R"("kind":"opx")"),
      edit(kOp, R"("kind":"op")", R"("kind":"telemetry")"),
      meta_line(),
      // layout: whitespace anywhere, a BOM, trailing bytes, a second value, an unclosed object
      edit(kOp, R"("kind":"op")", R"("kind": "op")"),
      edit(kOp, R"(,"op_name")", R"(, "op_name")"),
      " " + kOp,
      "\xEF\xBB\xBF" + kOp,
      kOp + " ",
      kOp + "\t",
      kOp + "\f",
      kOp + "\r\r",
      kOp + "}",
      kOp + R"({"kind":"edge","from_span":"a","to_span":"b","duration_ns":1})",
      kOp.substr(0, kOp.size() - 1),
      edit(kOp, "[8,128]", "[8,128"),
      edit(kOp, "[8,128]", "[8,,128]"),
      edit(kOp, "[8,128]", "[8,128,]"),
      R"({"kind":"gradient","event_id":"g","root":"m","key":"k","state":"present","norm":1e2})",
      R"({"kind":"gradient","event_id":"g","root":"m","key":"k","state":"present","norm":-1.5})",
      R"({"kind":"gradient","event_id":"g","root":"m","key":"k","state":"present","norm":01.5})",
      R"({"kind":"gradient","event_id":"g","root":"m","key":"k","state":"present","norm":.5})",
      R"({"kind":"gradient","event_id":"g","root":"m","key":"k","state":"present","norm":5.})",
      R"({"kind":"gradient","event_id":"g","root":"m","key":"k","state":"present","norm":null})",
      R"({"kind":"gradient","event_id":"g","root":"m","key":"k","state":"present","norm":0.12345678901234567890})",
      R"({"kind":"span_start","id":"s1","name":"r","start_ns":0,"span_kind":"function","measured":1})",
      R"({"kind":"span_start","id":"s1","name":"r","start_ns":0,"span_kind":"function","measured":false,"step":null})",
      R"({"kind":"span_start","id":"s1","name":"r","start_ns":0,"span_kind":"function","measured":false,"step":"fwd"})",
      R"({"kind":"tensor","span_id":"s4","tensor_id":"x","shape":[],"dtype":"f32","device":"cpu","requires_grad":TRUE,"category":"gradient"})",
      "",
      "{}",
      "[]",
  };
  FastLineScanner s;
  for (const std::string& line : off) {
    SCOPED_TRACE(line);
    EXPECT_EQ(scan(s, line).kind, Kind::none);
  }
}

TEST(FastScanner, NeverReadsPastTheLineEndIntoTheNextLine) {
  // The line ends inside a field name the scanner compares: the next line's bytes must not
  // complete it.
  FastLineScanner s;
  const std::string head = R"({"kind":"span_end","id":"s3")";
  EXPECT_EQ(scan(s, head, ',').kind, Kind::none);
  std::string two = head + "\n" + R"(,"duration_ns":1})" + "\n";
  two.append(64, ' ');
  EXPECT_EQ(s.scan(two.data()).kind, Kind::none);
}

TEST(FastScanner, NormsReadToTheSameDoubleAsSimdjson) {
  // from_chars and simdjson both round correctly; checked bit for bit on random decimals.
  std::mt19937_64 rng(42);
  FastLineScanner s;
  Arena arena;
  int taken = 0;
  for (int i = 0; i < 3000; ++i) {
    const double v =
        std::ldexp(static_cast<double>(rng() >> 11), static_cast<int>(rng() % 80) - 70);
    char num[64];
    std::snprintf(num, sizeof num, "%.*f", static_cast<int>(rng() % 20), v);
    const std::string line =
        std::string(
            R"({"kind":"gradient","event_id":"g","root":"m","key":"k","state":"present","norm":)") +
        num + "}";
    SCOPED_TRACE(line);
    const Scanned got = scan(s, line);
    const auto want = slow(line, arena);
    ASSERT_TRUE(want.has_value());
    if (got.kind == Kind::none) continue;
    ++taken;
    const auto& a = std::get<candle_graph::GradientEvent>(got.event);
    const auto& b = std::get<candle_graph::GradientEvent>(*want);
    ASSERT_TRUE(a.norm && b.norm);
    EXPECT_EQ(std::bit_cast<std::uint64_t>(*a.norm), std::bit_cast<std::uint64_t>(*b.norm));
  }
  EXPECT_GT(taken, 1000);  // most forms are ones the scanner takes
}

TEST(FastScanner, RandomEditsNeverMakeItAcceptWhatSimdjsonReadsDifferently) {
  // Single-byte insertions, deletions and replacements (bytes that matter to JSON) of every
  // canonical line: accepted ⇒ the simdjson path accepts the same event.
  static constexpr char kBytes[] = "\"\\,:{}[]0129-.eE ntfu\x01\x7f\xc3\xff\r\n";
  std::mt19937_64 rng(7);
  FastLineScanner s;
  Arena arena;
  int accepted = 0, bailed = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string line = kCanonical[rng() % kCanonical.size()];
    const std::size_t at = rng() % (line.size() + 1);
    const char b = kBytes[rng() % (sizeof kBytes - 1)];
    switch (rng() % 3) {
      case 0:
        line.insert(at, 1, b);
        break;
      case 1:
        if (at < line.size()) line.erase(at, 1);
        break;
      default:
        if (at < line.size()) line[at] = b;
    }
    const Scanned got = scan(s, line);
    if (got.kind == Kind::none) {
      ++bailed;
      continue;
    }
    ++accepted;
    SCOPED_TRACE(line);
    const auto want = slow(line, arena);
    ASSERT_TRUE(want.has_value());
    EXPECT_TRUE(got.event == *want);
  }
  EXPECT_GT(accepted, 1000);
  EXPECT_GT(bailed, 1000);
}

// A trace through the reader (scanner + simdjson) and the same lines through parse_event_line
// and from_events (simdjson only) give equal documents.
void expect_same_document(const std::string& text) {
  Arena arena;
  std::vector<TraceEvent> events;
  for (const std::string& line : lines_of(text)) {
    std::string_view l = line;
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    events.push_back(candle_graph::parse_event_line(l, arena));
  }
  const TraceDocument want = TraceDocument::from_events(events);
  const TraceDocument got = parse_both(text);
  EXPECT_TRUE(got == want);
  EXPECT_EQ(candle_graph::write_jsonl_string(got), candle_graph::write_jsonl_string(want));
}

TEST(FastScanner, SynthTraceReadsToTheSameDocument) {
  std::string text;
  candle_graph::synth::generate({.layers = 40, .ops_per_span = 3, .seed = 5},
                                [&](std::string_view chunk) { text += chunk; });
  expect_same_document(text);
  std::string crlf;
  for (const std::string& l : lines_of(text)) crlf += l + "\r\n";
  expect_same_document(crlf);
}

TEST(FastScanner, MixedCanonicalAndOtherLinesKeepStreamOrderAndLineNumbers) {
  // Every other line off the canonical form (spaces, another order, an escape): the document
  // is the same, and an error after them names its own line.
  const std::vector<std::string> lines = {
      meta_line(),
      span_start("s1", "", 0, true),
      R"({"kind": "span_start","id":"s2","parent_id":"s1","name":"a","start_ns":1,"span_kind":"function","measured":false})",
      R"({"kind":"op","span_id":"s2","op_name":"m\u0061tmul","inputs":[],"shape":[2],"dtype":"f32","device":"cpu","duration_ns":3,"timestamp_ns":4})",
      R"({"kind":"op","span_id":"s2","op_name":"matmul","inputs":[],"shape":[2],"dtype":"f32","device":"cpu","duration_ns":3,"timestamp_ns":5})",
      "",
      R"({"span_id":"s2","kind":"op","op_name":"add","inputs":["x"],"shape":[2],"dtype":"f32","device":"cpu","duration_ns":3,"timestamp_ns":6,"extra":[1]})",
      span_end("s2", 10),
      span_end("s1", 20),
  };
  const std::string text = join_lines(lines);
  const TraceDocument doc = parse_both(text);
  ASSERT_EQ(doc.ops().size(), 3u);
  EXPECT_EQ(doc.ops()[0].op_name, "matmul");  // unescaped by simdjson
  EXPECT_EQ(doc.ops()[1].timestamp_ns, 5u);
  EXPECT_EQ(doc.ops()[2].op_name, "add");
  ASSERT_EQ(doc.spans().size(), 2u);
  EXPECT_EQ(doc.spans()[1].id, "s2");
  // A canonical line that the assembler rejects (second span_end) after the irregular ones:
  // line 10 of the file (9 lines, one of them blank, then this one).
  expect_rejected(text + span_end("s2", 1) + "\n", 10, "duplicate span_end for `s2` at index 8");
}

TEST(FastScanner, ErrorsOnOffCanonicalLinesAreTheSimdjsonPathsMessages) {
  // Golden messages from the spec's wording of the simdjson path (reader_rules_test.cpp has
  // the full set); here the lines are otherwise canonical, so the scanner must bail out.
  const std::string pre = join_lines({meta_line(), span_start("s4", "", 0, true)});
  expect_rejected(pre + edit(kOp, "111299", "18446744073709551616") + "\n", 3,
                  ::testing::HasSubstr("`duration_ns`"));
  expect_rejected(pre + edit(kMemory, R"("alloc")", R"("Alloc")") + "\n", 3,
                  "invalid value for field `action` in memory event: unknown variant \"Alloc\", "
                  "expected one of `alloc`, `free`");
  expect_rejected(pre + edit(kMemory, R"(,"bytes":4096)", R"(,"bytes":4096,"bytes":1)") + "\n", 3,
                  "duplicate field `bytes` in memory event");
  expect_rejected(pre + edit(kOp, R"("dtype":"f32",)", "") + "\n", 3,
                  "missing field `dtype` in op event");
  expect_rejected(pre + edit(kOp, R"("output":"t1")", R"("output":7)") + "\n", 3,
                  ::testing::HasSubstr("invalid type for field `output` in op event: expected a "
                                       "string"));
}

}  // namespace
