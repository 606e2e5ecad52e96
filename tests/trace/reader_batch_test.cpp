// The reader parses whole lines in batches of up to 256 KiB (one simdjson stage 1 each) and falls
// back to the per-line path at the first irregular line. These tests put the irregularities
// deep inside traces of several batches and check that every error names the same line and says
// the same thing as in a small trace, and that irregular but valid layouts are still accepted.
// Expected line numbers come from the position of the line in the vector the test builds
// (index + 1), never from the reader.
#include "support/trace_lines.hpp"

namespace {

using ::testing::IsEmpty;
using ::testing::Not;
using namespace cgtest;

// meta, a root span, `children` closed child spans inside it, the root's end: ~110 bytes a
// line, so 6000 children make ~1.3 MB (five batches, two 1 MiB reads).
std::vector<std::string> large_trace(std::size_t children = 6000) {
  std::vector<std::string> lines{meta_line(), span_start("root", "", 0, true)};
  for (std::size_t i = 0; i < children; ++i) {
    const std::string id = "c" + std::to_string(i);
    lines.push_back(span_start(id, "root", 10 + i));
    lines.push_back(span_end(id, 1));
  }
  lines.push_back(span_end("root", 100000));
  return lines;
}

std::string text(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// Line indices spread over the whole file, including both sides of the first batch boundaries.
std::vector<std::size_t> positions(const std::vector<std::string>& lines) {
  std::vector<std::size_t> out{2, 3, 4, lines.size() - 1};
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::size_t before = bytes;
    bytes += lines[i].size() + 1;
    for (std::size_t boundary :
         {std::size_t{256} << 10, std::size_t{512} << 10, std::size_t{1} << 20})
      if (before < boundary && bytes >= boundary) {
        out.push_back(i - 1);
        out.push_back(i);
        out.push_back(i + 1);
      }
  }
  return out;
}

TEST(ReaderBatch, LargeValidTraceIsRead) {
  const auto lines = large_trace();
  const auto doc = parse_both(text(lines));
  EXPECT_EQ(doc.spans().size(), 6001u);
  EXPECT_EQ(doc.spans().back().id, "c5999");
  EXPECT_TRUE(doc.spans().back().closed);
}

TEST(ReaderBatch, UnknownKindAnywhereNamesItsLine) {
  const auto base = large_trace();
  for (std::size_t i : positions(base)) {
    auto lines = base;
    lines[i] = R"({"kind":"telemetry","x":1})";
    SCOPED_TRACE("line " + std::to_string(i + 1));
    expect_rejected(text(lines), i + 1, "unknown event kind \"telemetry\"");
  }
}

TEST(ReaderBatch, TwoEventsOnOneLineAnywhere) {
  const auto base = large_trace();
  for (std::size_t i : positions(base)) {
    if (i < 2) continue;
    auto lines = base;
    lines[i] += " " + span_start("extra", "root", 11);
    SCOPED_TRACE("line " + std::to_string(i + 1));
    expect_rejected(text(lines), i + 1, "invalid JSON: trailing characters after the event object");
  }
}

// A value and a brace after the object at the end of a batch passed for one document
// (ReaderHostile.AValueAndABraceAfterTheObject): here on both sides of the batch boundaries.
TEST(ReaderBatch, AValueAndABraceAfterTheObjectAnywhere) {
  const auto base = large_trace();
  for (std::size_t i : positions(base)) {
    auto lines = base;
    lines[i] += "0}";
    SCOPED_TRACE("line " + std::to_string(i + 1));
    expect_rejected(text(lines), i + 1, "invalid JSON: trailing characters after the event object");
  }
}

TEST(ReaderBatch, EventSpanningTwoLinesIsRejectedAtItsFirstLine) {
  const auto base = large_trace();
  for (std::size_t i : positions(base)) {
    if (i < 2) continue;
    auto lines = base;
    const std::size_t comma = lines[i].find(',');
    lines[i] = lines[i].substr(0, comma + 1) + "\n" + lines[i].substr(comma + 1);
    SCOPED_TRACE("line " + std::to_string(i + 1));
    expect_rejected(text(lines), i + 1, Not(IsEmpty()));
  }
}

// An assembler rule (not a JSON one): the event index in the message counts events, not lines.
TEST(ReaderBatch, DuplicateSpanStartDeepInsideNamesLineAndIndex) {
  auto lines = large_trace();
  const std::size_t i = lines.size() - 3;  // after ~1.3 MB
  lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(i), span_start("c17", "root", 20));
  expect_rejected(text(lines), i + 1,
                  ("duplicate span_start id `c17` at index " + std::to_string(i)).c_str());
}

// Blank lines, whitespace-only lines, CRLF and a form feed before an event (which the per-line
// rules trim) spread over several batches: accepted, and an error after them still names the
// right line.
TEST(ReaderBatch, IrregularButValidLayoutAndLaterLineNumbers) {
  const auto base = large_trace();
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < base.size(); ++i) {
    if (i % 97 == 5) lines.push_back("");
    if (i % 101 == 7) lines.push_back("  \t ");
    if (i % 89 == 3) lines.push_back("\r");
    lines.push_back(i % 113 == 9 ? "\f" + base[i] : i % 7 == 1 ? base[i] + "\r" : base[i]);
  }
  const auto doc = parse_both(text(lines));
  EXPECT_EQ(doc.spans().size(), 6001u);

  auto bad = lines;
  const std::size_t at = bad.size() - 2;
  bad[at] = R"({"kind":"span_end","id":"nope","duration_ns":1})";
  expect_rejected(text(bad), at + 1, Not(IsEmpty()));
}

}  // namespace
