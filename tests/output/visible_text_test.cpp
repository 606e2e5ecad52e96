// Control characters of text from a trace, shown as escapes (output/visible_text.hpp). Expected
// strings are written out by hand from the escapes' definition: line feed, carriage return and
// tab as \n, \r, \t, other C0 and DEL as \xNN (two lowercase hex digits), C1 (U+0080–U+009F, UTF-8
// C2 80–C2 9F) and the bidirectional controls as \uNNNN, the rest unchanged.
#include "output/visible_text.hpp"

#include <gtest/gtest.h>

#include <string>

using candle_graph::output::visible_text;

TEST(VisibleText, PlainAndNonAsciiTextIsUnchanged) {
  EXPECT_EQ(visible_text("aten::mm"), "aten::mm");
  EXPECT_EQ(visible_text("é∑ layer\"0\\"), "é∑ layer\"0\\");
  EXPECT_EQ(visible_text("\xC2\xA0"), "\xC2\xA0");  // U+00A0, just past the C1 range
  EXPECT_EQ(visible_text("\xC2"), "\xC2");          // a lead byte at the end: not a C1 control
}

TEST(VisibleText, ControlCharactersBecomeEscapes) {
  EXPECT_EQ(visible_text("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(visible_text("\n\r\t\x07"), "\\n\\r\\t\\x07");
  EXPECT_EQ(visible_text(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(visible_text("\x7f"), "\\x7f");
  EXPECT_EQ(visible_text("\xC2\x9B"
                         "31m"),
            "\\u009b31m");                             // the one-byte CSI of C1
  EXPECT_EQ(visible_text("x\xC2\x85y"), "x\\u0085y");  // NEL, a line break to some readers
}

// The bidirectional controls (UTF-8 by hand: U+202E is E2 80 AE, U+2066 is E2 81 A6, U+061C is
// D8 9C) reorder what follows them on a terminal: "abc\u202Efdp.exe" reads as "abcexe.pdf".
TEST(VisibleText, BidirectionalControlsBecomeEscapes) {
  EXPECT_EQ(visible_text("abc\xE2\x80\xAE"
                         "fdp.exe"),
            "abc\\u202efdp.exe");
  EXPECT_EQ(visible_text("\xE2\x80\xAA\xE2\x80\xAB\xE2\x80\xAC\xE2\x80\xAD"),
            "\\u202a\\u202b\\u202c\\u202d");
  EXPECT_EQ(visible_text("\xE2\x81\xA6x\xE2\x81\xA7y\xE2\x81\xA8z\xE2\x81\xA9"),
            "\\u2066x\\u2067y\\u2068z\\u2069");
  EXPECT_EQ(visible_text("\xE2\x80\x8E\xE2\x80\x8F\xD8\x9C"), "\\u200e\\u200f\\u061c");
  // Their neighbours are text: U+202F (narrow no-break space), U+200D (zero-width joiner, in
  // emoji), U+2065 (unassigned), U+061B (Arabic semicolon), and a sequence cut short.
  EXPECT_EQ(visible_text("\xE2\x80\xAF\xE2\x80\x8D\xE2\x81\xA5\xD8\x9B"),
            "\xE2\x80\xAF\xE2\x80\x8D\xE2\x81\xA5\xD8\x9B");
  EXPECT_EQ(visible_text("a\xE2\x80"), "a\xE2\x80");
  EXPECT_EQ(visible_text("\xE2"), "\xE2");
}
