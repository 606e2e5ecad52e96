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
