// Text from a trace in a Markdown output stays on its line and in its cell
// (output/markdown_text.hpp). Expected strings are written out by hand from CommonMark's and GFM's
// rules: a code span closes at a backtick run as long as its opening one, and `\|` is a pipe
// inside a table cell.
#include "output/markdown_text.hpp"

#include <gtest/gtest.h>

using namespace candle_graph::output;

TEST(MarkdownText, PlainNamesAreOneCodeSpan) {
  EXPECT_EQ(markdown_code("aten::mm"), "`aten::mm`");
  EXPECT_EQ(markdown_inline_code("demo::train::update"), "`demo::train::update`");
  EXPECT_EQ(markdown_line("rank 7 arrived last"), "rank 7 arrived last");
}

TEST(MarkdownText, APipeIsEscapedInACellOnly) {
  EXPECT_EQ(markdown_code("a|b"), "`a\\|b`");
  EXPECT_EQ(markdown_cell("a|b"), "a\\|b");
  EXPECT_EQ(markdown_inline_code("a|b"), "`a|b`");
  EXPECT_EQ(markdown_line("a|b"), "a|b");
}

TEST(MarkdownText, TheFenceOutrunsEveryBacktickRunInside) {
  EXPECT_EQ(markdown_code("a`b"), "`` a`b ``");
  EXPECT_EQ(markdown_code("x``y`"), "``` x``y` ```");
  EXPECT_EQ(markdown_inline_code("`"), "`` ` ``");
}

TEST(MarkdownText, LineBreaksAndControlsCannotStartALine) {
  EXPECT_EQ(markdown_line("ok\n\n## Findings\n- forged"), "ok\\n\\n## Findings\\n- forged");
  EXPECT_EQ(markdown_code("a\r\nb"), "`a\\r\\nb`");
  EXPECT_EQ(markdown_cell("x\n| forged | row |"), "x\\n\\| forged \\| row \\|");
  EXPECT_EQ(markdown_inline_code("t\x1b]0;title\x07"), "`t\\x1b]0;title\\x07`");
}

// A finding is a list item's text, so what it starts with starts a block there: torchrec names
// its ranges `## backward ##`, and `- ## backward ##: 3.52 ms self time` renders as a heading
// inside the list. A backslash before ASCII punctuation makes it a literal character (CommonMark
// §2.4); each expected string below puts it where CommonMark would open a block: an ATX heading
// (1–6 `#` then a space or the end), a block quote, a bullet list marker (`-`, `+`, `*` then a
// space or the end), an ordered one (1–9 digits, `.` or `)`, then a space or the end), a
// thematic break (three or more of one of `-`, `*`, `_`, spaces between), a code fence (three
// or more backticks or tildes), an HTML block (`<` then a letter, `/`, `!` or `?`).
TEST(MarkdownText, WhatWouldOpenABlockAtTheStartIsALiteral) {
  EXPECT_EQ(markdown_line("## backward ##: 3.52 ms self time"),
            "\\## backward ##: 3.52 ms self time");
  EXPECT_EQ(markdown_line("###### six"), "\\###### six");
  EXPECT_EQ(markdown_line("#"), "\\#");
  EXPECT_EQ(markdown_line("> quoted"), "\\> quoted");
  EXPECT_EQ(markdown_line("- item"), "\\- item");
  EXPECT_EQ(markdown_line("+ item"), "\\+ item");
  EXPECT_EQ(markdown_line("* item"), "\\* item");
  EXPECT_EQ(markdown_line("12. item"), "12\\. item");
  EXPECT_EQ(markdown_line("3) item"), "3\\) item");
  EXPECT_EQ(markdown_line("_ _ _"), "\\_ _ _");
  EXPECT_EQ(markdown_line("***"), "\\***");
  EXPECT_EQ(markdown_line("```python"), "\\```python");
  EXPECT_EQ(markdown_line("~~~"), "\\~~~");
  EXPECT_EQ(markdown_line("<!-- hidden"), "\\<!-- hidden");
  EXPECT_EQ(markdown_line("<details>"), "\\<details>");
  // What opens no block stays as it is: the original's bytes.
  EXPECT_EQ(markdown_line("####### seven"), "####### seven");
  EXPECT_EQ(markdown_line("#hashtag"), "#hashtag");
  EXPECT_EQ(markdown_line("-x"), "-x");
  EXPECT_EQ(markdown_line("10.0% of the window"), "10.0% of the window");
  EXPECT_EQ(markdown_line("1234567890. ten digits"), "1234567890. ten digits");
  EXPECT_EQ(markdown_line("1 op started"), "1 op started");
  EXPECT_EQ(markdown_line("*emphasis*"), "*emphasis*");
  EXPECT_EQ(markdown_line("``code``"), "``code``");
  EXPECT_EQ(markdown_line("<4, float>"), "<4, float>");
  EXPECT_EQ(markdown_line("top GPU kernel `k`: 1.00 ms total"),
            "top GPU kernel `k`: 1.00 ms total");
  // Only at the start: further in, these are a paragraph's text.
  EXPECT_EQ(markdown_line("step ## 1"), "step ## 1");
  // A table cell holds inline text only.
  EXPECT_EQ(markdown_cell("## backward ##"), "## backward ##");
}
