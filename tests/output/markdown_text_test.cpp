// Text from a trace in a Markdown output stays on its line and in its cell
// (output/markdown_text.hpp). Expected strings are written out by hand from CommonMark's and GFM's
// rules: a code span closes at a backtick run as long as its opening one, and `\|` is a pipe
// inside a table cell.
#include "output/markdown_text.hpp"

#include <gtest/gtest.h>

#include <string_view>
#include <utility>
#include <vector>

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

// A name quoted in a finding or message keeps its bytes (the JSON holds them; markdown_line makes
// controls visible when it is written as Markdown) and gets the same fence as markdown_code.
TEST(MarkdownText, QuotedCodeKeepsTheTextAndOutrunsItsBackticks) {
  EXPECT_EQ(quoted_code("DistributedDataParallel.forward"), "`DistributedDataParallel.forward`");
  EXPECT_EQ(quoted_code("my`span` | x"), "`` my`span` | x ``");
  EXPECT_EQ(quoted_code("``"), "``` `` ```");
  EXPECT_EQ(quoted_code("a\nb|c"), "`a\nb|c`");
  // Written into a line, the span is left as it is and the text around it escaped.
  EXPECT_EQ(markdown_line("inside " + quoted_code("a`*b*") + " *x*"), "inside `` a`*b* `` \\*x\\*");
}

TEST(MarkdownText, LineBreaksAndControlsCannotStartALine) {
  EXPECT_EQ(markdown_line("ok\n\n## Findings\n- forged"), "ok\\n\\n## Findings\\n- forged");
  EXPECT_EQ(markdown_code("a\r\nb"), "`a\\r\\nb`");
  EXPECT_EQ(markdown_cell("x\n| forged | row |"), "x\\n\\| forged \\| row \\|");
  EXPECT_EQ(markdown_inline_code("t\x1b]0;title\x07"), "`t\\x1b]0;title\\x07`");
}

namespace {

// Each case: the text, and markdown_line's output for it.
using Cases = std::vector<std::pair<std::string_view, std::string_view>>;

void expect_lines(const Cases& cases) {
  for (const auto& [text, line] : cases) EXPECT_EQ(markdown_line(text), line) << text;
}

}  // namespace

// A finding is a list item's text, so what it starts with starts a block there: torchrec names
// its ranges `## backward ##`, and `- ## backward ##: 3.52 ms self time` renders as a heading
// inside the list. A backslash before ASCII punctuation makes it a literal character (CommonMark
// §2.4); each expected string below puts it where CommonMark would open a block: an ATX heading
// (1–6 `#` then a space or the end), a block quote, a bullet list marker (`-`, `+`, `*` then a
// space or the end), an ordered one (1–9 digits, `.` or `)`, then a space or the end), a
// thematic break (three or more of one of `-`, `*`, `_`, spaces between), a code fence (three
// or more backticks or tildes), an HTML block (`<` then a letter, `/`, `!` or `?`).
TEST(MarkdownText, WhatWouldOpenABlockAtTheStartIsALiteral) {
  expect_lines({
      {"## backward ##: 3.52 ms self time", "\\## backward ##: 3.52 ms self time"},
      {"###### six", "\\###### six"},
      {"#", "\\#"},
      {"> quoted", "\\> quoted"},
      {"- item", "\\- item"},
      {"+ item", "\\+ item"},
      {"* item", "\\* item"},
      {"12. item", "12\\. item"},
      {"3) item", "3\\) item"},
      // (`_` and `*` outside a word are escaped anyway, below: each of them.)
      {"_ _ _", "\\_ \\_ \\_"},
      {"***", "\\*\\*\\*"},
      {"```python", "\\```python"},
      {"~~~", "\\~\\~\\~"},
      {"<!-- hidden", "\\<!-- hidden"},
      {"<details>", "\\<details>"},
      // Leading spaces: a paragraph drops them, and four after a list marker start a code
      // block. A character reference is shown as a space and opens nothing.
      {"    indented: 1 ms", "&#32;&#32;&#32;&#32;indented: 1 ms"},
  });
  // What opens no block stays as it is: the original's bytes.
  expect_lines({
      {"####### seven", "####### seven"},
      {"#hashtag", "#hashtag"},
      {"-x", "-x"},
      {"10.0% of the window", "10.0% of the window"},
      {"1234567890. ten digits", "1234567890. ten digits"},
      {"1 op started", "1 op started"},
      {"``code``", "``code``"},
      {"top GPU kernel `k`: 1.00 ms total", "top GPU kernel `k`: 1.00 ms total"},
      // Only at the start: further in, these are a paragraph's text.
      {"step ## 1", "step ## 1"},
  });
  // A table cell holds inline text only; its leading spaces would be dropped too.
  EXPECT_EQ(markdown_cell("## backward ##"), "## backward ##");
  EXPECT_EQ(markdown_cell(" x"), "&#32;x");
}

// Inline markup from a name (CommonMark §6, GFM's strikethrough): DataLoader's
// `_SingleProcessDataLoaderIter.__next__` rendered as "…Iter.**next**" with its underscores gone;
// `[text](url)` is a link, `<tag>` HTML, `&amp;` an entity, `~x~` struck through. A backslash
// before the character that would open or close them keeps each as written. An underscore inside
// a word (`layer_norm`) neither opens nor closes emphasis and stays as it is; a code span, which
// the findings use to quote names, is written as it is, since a backslash inside one is shown.
TEST(MarkdownText, InlineMarkupOutsideCodeSpansIsALiteral) {
  expect_lines({
      {"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__: 0.63 ms",
       "enumerate(DataLoader)#\\_SingleProcessDataLoaderIter.\\_\\_next\\_\\_: 0.63 ms"},
      {"aten::layer_norm", "aten::layer_norm"},
      {"aten::add_", "aten::add\\_"},
      {"é_ü", "é_ü"},  // letters beyond ASCII are word characters too
      {"*emphasis*", "\\*emphasis\\*"},
      {"[param|cuda]", "\\[param|cuda]"},
      {"[docs](https://example.com)", "\\[docs](https://example.com)"},
      {"![x](y.png)", "!\\[x](y.png)"},
      {"<4, float>", "\\<4, float>"},
      {"a ~~b~~", "a \\~\\~b\\~\\~"},
      {"&amp; &#42; a & b", "\\&amp; \\&#42; a & b"},
      {"C:\\dir\\*", "C:\\dir\\\\\\*"},  // `\d` is no escape; `\*` is one
      {"inside `a_*b` kept", "inside `a_*b` kept"},
      {"``a`b`` then *x*", "``a`b`` then \\*x\\*"},
      {"an open ` and *x*", "an open ` and \\*x\\*"},  // no closing run
      // The escapes of control characters stay as they are: `\n` is no Markdown escape.
      {"a\nb", "a\\nb"},
  });
  // In a table cell the markup's backslashes come before the cell's `\|`.
  EXPECT_EQ(markdown_cell("a\\|b_"), "a\\\\\\|b\\_");
  EXPECT_EQ(markdown_cell("**x**|y"), "\\*\\*x\\*\\*\\|y");
}
