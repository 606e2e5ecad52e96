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
  // (`_` and `*` outside a word are escaped anyway, below: each of them.)
  EXPECT_EQ(markdown_line("_ _ _"), "\\_ \\_ \\_");
  EXPECT_EQ(markdown_line("***"), "\\*\\*\\*");
  EXPECT_EQ(markdown_line("```python"), "\\```python");
  EXPECT_EQ(markdown_line("~~~"), "\\~\\~\\~");
  EXPECT_EQ(markdown_line("<!-- hidden"), "\\<!-- hidden");
  EXPECT_EQ(markdown_line("<details>"), "\\<details>");
  // What opens no block stays as it is: the original's bytes.
  EXPECT_EQ(markdown_line("####### seven"), "####### seven");
  EXPECT_EQ(markdown_line("#hashtag"), "#hashtag");
  EXPECT_EQ(markdown_line("-x"), "-x");
  EXPECT_EQ(markdown_line("10.0% of the window"), "10.0% of the window");
  EXPECT_EQ(markdown_line("1234567890. ten digits"), "1234567890. ten digits");
  EXPECT_EQ(markdown_line("1 op started"), "1 op started");
  EXPECT_EQ(markdown_line("``code``"), "``code``");
  EXPECT_EQ(markdown_line("top GPU kernel `k`: 1.00 ms total"),
            "top GPU kernel `k`: 1.00 ms total");
  // Leading spaces: a paragraph drops them, and four after a list marker start a code block. A
  // character reference is shown as a space and opens nothing.
  EXPECT_EQ(markdown_line("    indented: 1 ms"), "&#32;&#32;&#32;&#32;indented: 1 ms");
  EXPECT_EQ(markdown_cell(" x"), "&#32;x");
  // Only at the start: further in, these are a paragraph's text.
  EXPECT_EQ(markdown_line("step ## 1"), "step ## 1");
  // A table cell holds inline text only.
  EXPECT_EQ(markdown_cell("## backward ##"), "## backward ##");
}

// Inline markup from a name (CommonMark §6, GFM's strikethrough): DataLoader's
// `_SingleProcessDataLoaderIter.__next__` rendered as "…Iter.**next**" with its underscores gone;
// `[text](url)` is a link, `<tag>` HTML, `&amp;` an entity, `~x~` struck through. A backslash
// before the character that would open or close them keeps each as written. An underscore inside
// a word (`layer_norm`) neither opens nor closes emphasis and stays as it is; a code span, which
// the findings use to quote names, is written as it is, since a backslash inside one is shown.
TEST(MarkdownText, InlineMarkupOutsideCodeSpansIsALiteral) {
  EXPECT_EQ(markdown_line("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__: 0.63 ms"),
            "enumerate(DataLoader)#\\_SingleProcessDataLoaderIter.\\_\\_next\\_\\_: 0.63 ms");
  EXPECT_EQ(markdown_line("aten::layer_norm"), "aten::layer_norm");
  EXPECT_EQ(markdown_line("aten::add_"), "aten::add\\_");
  EXPECT_EQ(markdown_line("é_ü"), "é_ü");  // letters beyond ASCII are word characters too
  EXPECT_EQ(markdown_line("*emphasis*"), "\\*emphasis\\*");
  EXPECT_EQ(markdown_line("[param|cuda]"), "\\[param|cuda]");
  EXPECT_EQ(markdown_line("[docs](https://example.com)"), "\\[docs](https://example.com)");
  EXPECT_EQ(markdown_line("![x](y.png)"), "!\\[x](y.png)");
  EXPECT_EQ(markdown_line("<4, float>"), "\\<4, float>");
  EXPECT_EQ(markdown_line("a ~~b~~"), "a \\~\\~b\\~\\~");
  EXPECT_EQ(markdown_line("&amp; &#42; a & b"), "\\&amp; \\&#42; a & b");
  EXPECT_EQ(markdown_line("C:\\dir\\*"), "C:\\dir\\\\\\*");  // `\d` is no escape; `\*` is one
  EXPECT_EQ(markdown_line("inside `a_*b` kept"), "inside `a_*b` kept");
  EXPECT_EQ(markdown_line("``a`b`` then *x*"), "``a`b`` then \\*x\\*");
  EXPECT_EQ(markdown_line("an open ` and *x*"), "an open ` and \\*x\\*");  // no closing run
  // The escapes of control characters stay as they are: `\n` is no Markdown escape.
  EXPECT_EQ(markdown_line("a\nb"), "a\\nb");
  // In a table cell the markup's backslashes come before the cell's `\|`.
  EXPECT_EQ(markdown_cell("a\\|b_"), "a\\\\\\|b\\_");
  EXPECT_EQ(markdown_cell("**x**|y"), "\\*\\*x\\*\\*\\|y");
}
