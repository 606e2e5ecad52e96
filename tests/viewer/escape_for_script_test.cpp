// escape_for_script (trace6.md §12.2): `<`, `>`, U+2028 and U+2029 become the literal texts
// `\u003c`,
// `\u003e`, `\u2028`, `\u2029`; every other byte is copied unchanged.
//
// Expected values come from the spec text and from UTF-8 itself, not from the code: U+2028 =
// 0010 0000 0010 1000 encodes as 1110'0010 10'000000 10'101000 = E2 80 A8, U+2029 as E2 80 A9;
// their neighbours U+2027 / U+202A are E2 80 A7 / E2 80 AA and must pass through.
#include <gtest/gtest.h>

#include <simdjson.h>
#include <nlohmann/json.hpp>
#include <random>

#include "viewer/html_document.hpp"
#include "viewer_test_helpers.hpp"

using candle_graph::viewer::escape_for_script;
using cg_viewer_test::count_ci;

namespace {

// An independent oracle: four global find/replace passes. The replacements consist of ASCII
// letters, digits and a backslash only, so no pass can create a match for a later one.
std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  for (std::size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
  return s;
}
std::string oracle(std::string s) {
  s = replace_all(std::move(s), "<", "\\u003c");
  s = replace_all(std::move(s), ">", "\\u003e");
  s = replace_all(std::move(s), "\xE2\x80\xA8", "\\u2028");
  return replace_all(std::move(s), "\xE2\x80\xA9", "\\u2029");
}

}  // namespace

TEST(EscapeForScript, TheFourCharactersBecomeLiteralEscapeText) {
  EXPECT_EQ(escape_for_script("<"), R"(\u003c)");
  EXPECT_EQ(escape_for_script(">"), R"(\u003e)");
  EXPECT_EQ(escape_for_script("\xE2\x80\xA8"), R"(\u2028)");
  EXPECT_EQ(escape_for_script("\xE2\x80\xA9"), R"(\u2029)");
  EXPECT_EQ(escape_for_script("a<b>c\xE2\x80\xA8"
                              "d\xE2\x80\xA9"
                              "e"),
            R"(a\u003cb\u003ec\u2028d\u2029e)");
  EXPECT_EQ(escape_for_script("<<>>"), R"(\u003c\u003c\u003e\u003e)");
}

TEST(EscapeForScript, EveryOtherByteIsCopiedUnchanged) {
  // All 256 byte values except `<` and `>`; 0xE2 is followed by 0xE3, so it starts no U+2028.
  std::string all;
  for (int b = 0; b < 256; ++b)
    if (b != '<' && b != '>') all.push_back(static_cast<char>(b));
  EXPECT_EQ(escape_for_script(all), all);
  EXPECT_EQ(escape_for_script(""), "");
}

TEST(EscapeForScript, NeighbouringAndTruncatedSequencesPassThrough) {
  const std::string cases[] = {
      "\xE2\x80\xA7",                    // U+2027
      "\xE2\x80\xAA",                    // U+202A
      "x\xE2\x80",                       // truncated at the end
      "x\xE2",                           // truncated after one byte
      "\xE2\xA8",                        // E2 without the 80
      "\x80\xA8",                        // continuation bytes alone
      "\xE2\x81\xA8",                    // U+2068
      "\xF0\x9F\x98\x80",                // U+1F600, a 4-byte sequence
      "\xC3\xA9\xE2\x82\xAC",            // é €
      R"(already \u003c escaped text)",  // literal escape text is not touched again
  };
  for (const std::string& c : cases) EXPECT_EQ(escape_for_script(c), c) << c;
}

TEST(EscapeForScript, SequencesNextToOtherBytesAreFoundExactly) {
  // A stray E2 right before a real U+2028 must not hide it.
  EXPECT_EQ(escape_for_script("\xE2\xE2\x80\xA8"),
            "\xE2"
            R"(\u2028)");
  EXPECT_EQ(escape_for_script("\xE2\x80\xE2\x80\xA9"),
            "\xE2\x80"
            R"(\u2029)");
  // The sequence as the very last three bytes.
  EXPECT_EQ(escape_for_script("ab\xE2\x80\xA8"), R"(ab\u2028)");
  EXPECT_EQ(escape_for_script("\xE2\x80\xA8\xE2\x80\xA9"), R"(\u2028\u2029)");
}

TEST(EscapeForScript, MatchesAnIndependentOracleOnRandomBytes) {
  // Bytes biased towards the interesting ones so runs like E2 80 A8 occur often.
  const char alphabet[] = {'<',    '>', '\xE2', '\x80', '\xA8', '\xA9', '\xA7',
                           '\xAA', 'a', '\\',   '/',    's',    '"'};
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::string s(rng() % 24, ' ');
    for (char& c : s) c = alphabet[rng() % sizeof alphabet];
    ASSERT_EQ(escape_for_script(s), oracle(s)) << "round " << round;
  }
}

TEST(EscapeForScript, JsonTextKeepsItsValue) {
  nlohmann::json value = {
      {"close</script>", "</script><!-- <script>alert(1)</script> -->"},
      {"upper", "</SCRIPT ></ScRiPt>"},
      {"separators", "a\u2028b\u2029c"},
      {"neighbours", "\u2027\u202A\U0001F600 é"},
      {"nested", {{"list", {"<", ">", "\u2028", 1.5, nullptr, true}}}},
      {"backslash<", "\\<\\>"},
  };
  // nlohmann writes U+2028, `<` and `>` raw, so the escaping has work to do.
  const std::string text = value.dump();
  ASSERT_NE(text.find('<'), std::string::npos);
  ASSERT_NE(text.find("\xE2\x80\xA8"), std::string::npos);

  const std::string escaped = escape_for_script(text);
  EXPECT_EQ(escaped.find('<'), std::string::npos);
  EXPECT_EQ(escaped.find('>'), std::string::npos);
  EXPECT_EQ(escaped.find("\xE2\x80\xA8"), std::string::npos);
  EXPECT_EQ(escaped.find("\xE2\x80\xA9"), std::string::npos);
  EXPECT_EQ(count_ci(escaped, "</script"), 0u);
  EXPECT_EQ(nlohmann::json::parse(escaped), value);

  // A second, independent parser agrees on a string holding all four.
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(escaped);
  std::string_view close;
  ASSERT_EQ(parser.parse(padded)["close</script>"].get(close), simdjson::SUCCESS);
  EXPECT_EQ(close, "</script><!-- <script>alert(1)</script> -->");
  std::string_view separators;
  ASSERT_EQ(parser.parse(padded)["separators"].get(separators), simdjson::SUCCESS);
  EXPECT_EQ(separators,
            "a\xE2\x80\xA8"
            "b\xE2\x80\xA9"
            "c");
}

TEST(EscapeForScript, NeverContainsAClosingScriptTagInAnyCase) {
  for (std::string_view s : {"</script>", "</SCRIPT>", "</ScRiPt", "<</script", "</script/"}) {
    const std::string out = escape_for_script(s);
    EXPECT_EQ(count_ci(out, "</script"), 0u) << s;
    EXPECT_EQ(out.find('<'), std::string::npos) << s;
  }
}
