// Control characters of text from a trace, shown as escapes (output/visible_text.hpp). Expected
// strings are written out by hand from the escapes' definition: line feed, carriage return and
// tab as \n, \r, \t, other C0 and DEL as \xNN (two lowercase hex digits), C1 (U+0080–U+009F, UTF-8
// C2 80–C2 9F) as \uNNNN, the rest unchanged.
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
