// JSON text primitives behind every writer (src/output/json_text.hpp): serde_json string
// escaping and ryu's float layout. Expected strings are derived by hand from the documented
// rules, not from running the code:
//  - serde_json escapes `"` `\` and the C0 controls only: \b \f \n \r \t short forms, the rest
//    \u00XX with lowercase hex; `/`, DEL, U+2028/U+2029 and all other UTF-8 pass through.
//  - ryu (ryu::pretty::format64, used by serde_json) prints the shortest round-trip digits d
//    (length n) with decimal exponent k (value = d × 10^k), kk = n + k:
//      0 <= k and kk <= 16  → digits, k zeros, ".0"          (13 → "13.0")
//      0 < kk <= 16         → digits with a point inside     (0.42 → "0.42")
//      -5 < kk <= 0         → "0." then -kk zeros, digits    (0.0001 → "0.0001")
//      otherwise            → d[0] ["." rest] "e" (kk-1)    (1e21 → "1e21", 1.5e-7 → "1.5e-7")
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "output/json_text.hpp"

namespace {

using candle_graph::output::append_f64;
using candle_graph::output::append_json_string;
using candle_graph::output::is_valid_utf8;

std::string esc(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}
std::string f64(double v) {
  std::string out;
  append_f64(out, v);
  return out;
}

TEST(JsonString, PlainTextIsQuotedOnly) {
  EXPECT_EQ(esc(""), R"("")");
  EXPECT_EQ(esc("abc / def"), R"("abc / def")");
  EXPECT_EQ(esc("\x7f"), "\"\x7f\"");
}

TEST(JsonString, QuotesAndBackslash) {
  EXPECT_EQ(esc("a\"b"), R"("a\"b")");
  EXPECT_EQ(esc("a\\b"), R"("a\\b")");
  EXPECT_EQ(esc("\\\""), R"("\\\"")");
}

TEST(JsonString, ShortControlEscapes) {
  EXPECT_EQ(esc("\b\f\n\r\t"), R"("\b\f\n\r\t")");
}

TEST(JsonString, OtherControlsAsLowercaseHex) {
  EXPECT_EQ(esc(std::string("\0", 1)), R"("\u0000")");
  EXPECT_EQ(esc("\x01"), R"("\u0001")");
  EXPECT_EQ(esc("\x0b"), R"("\u000b")");
  EXPECT_EQ(esc("\x1b[0m"), R"("\u001b[0m")");
  EXPECT_EQ(esc("\x1f"), R"("\u001f")");
}

TEST(JsonString, EveryControlCharacterIsEscapedAndDecodesBack) {
  for (int c = 0; c < 0x20; ++c) {
    const std::string s(1, static_cast<char>(c));
    const std::string e = esc(s);
    for (char ch : e) EXPECT_GE(static_cast<unsigned char>(ch), 0x20) << c;
    EXPECT_EQ(nlohmann::json::parse(e).get<std::string>(), s) << c;
  }
}

// serde_json leaves U+2028/U+2029 alone (they are valid in JSON strings).
TEST(JsonString, LineSeparatorsPassThrough) {
  EXPECT_EQ(esc("\xE2\x80\xA8\xE2\x80\xA9"), "\"\xE2\x80\xA8\xE2\x80\xA9\"");
}

TEST(JsonString, MultibyteUtf8PassesThrough) {
  const std::string s =
      "\xC3\xA9 \xE6\xA8\xA1 \xF0\x9F\x9A\x80 \xF4\x8F\xBF\xBF";  // é 模 🚀 U+10FFFF
  EXPECT_EQ(esc(s), "\"" + s + "\"");
}

// Invalid UTF-8 becomes U+FFFD so the output is always valid JSON text.
TEST(JsonString, InvalidUtf8BecomesReplacementCharacter) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(esc("\xff"), "\"" + fffd + "\"");
  EXPECT_EQ(esc("a\x80z"), "\"a" + fffd + "z\"");
  EXPECT_EQ(esc("\xc3("), "\"" + fffd + "(\"");           // lead byte without continuation
  EXPECT_EQ(esc("ok\xc3"), "\"ok" + fffd + "\"");         // truncated at the end
  EXPECT_EQ(esc("\xc0\x80"), "\"" + fffd + fffd + "\"");  // overlong NUL: two bad bytes
  for (const std::string& bad :
       std::vector<std::string>{std::string("\xed\xa0\x80"), std::string("\xf4\x90\x80\x80"),
                                std::string("\xe0\x80\xaf"), std::string("\xf0\x80\x80\xaf"),
                                std::string("\xe2\x82"), std::string("\xfe\xfe\xff")}) {
    const std::string e = esc("<" + bad + ">");
    EXPECT_TRUE(is_valid_utf8(e)) << e;
    EXPECT_NE(e.find(fffd), std::string::npos);
    EXPECT_EQ(e.front(), '"');
    EXPECT_EQ(e.substr(1, 1), "<");
    EXPECT_EQ(e.substr(e.size() - 2), ">\"");
    EXPECT_TRUE(nlohmann::json::accept(e));
  }
}

TEST(JsonString, Utf8Validation) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("\xC3\xA9\xF0\x9F\x9A\x80"));
  EXPECT_FALSE(is_valid_utf8("\xC3"));
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // > U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\xC1\xBF"));          // overlong
}

TEST(JsonFloat, IntegralValuesKeepPointZero) {
  EXPECT_EQ(f64(13.0), "13.0");
  EXPECT_EQ(f64(1.0), "1.0");
  EXPECT_EQ(f64(100.0), "100.0");
  EXPECT_EQ(f64(-2.0), "-2.0");
  EXPECT_EQ(f64(0.0), "0.0");
  EXPECT_EQ(f64(-0.0), "-0.0");
  EXPECT_EQ(f64(1e15), "1000000000000000.0");  // kk = 16: last decimal form
  EXPECT_EQ(f64(9007199254740992.0), "9007199254740992.0");
}

TEST(JsonFloat, DecimalFractions) {
  EXPECT_EQ(f64(0.1), "0.1");
  EXPECT_EQ(f64(0.42), "0.42");
  EXPECT_EQ(f64(1.5), "1.5");
  EXPECT_EQ(f64(-1.5), "-1.5");
  EXPECT_EQ(f64(123456.789), "123456.789");
  EXPECT_EQ(f64(0.13333333333333333), "0.13333333333333333");  // trace6.md §17.14
  EXPECT_EQ(f64(2.0 / 15.0), "0.13333333333333333");
  EXPECT_EQ(f64(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(f64(0.0001), "0.0001");      // kk = -3
  EXPECT_EQ(f64(0.00001), "0.00001");    // kk = -4: last decimal form
  EXPECT_EQ(f64(0.000025), "0.000025");  // kk = -4
}

TEST(JsonFloat, ExponentForms) {
  EXPECT_EQ(f64(1e16), "1e16");  // kk = 17
  EXPECT_EQ(f64(1e21), "1e21");
  EXPECT_EQ(f64(1.2345e20), "1.2345e20");
  EXPECT_EQ(f64(-1e100), "-1e100");
  EXPECT_EQ(f64(1e-6), "1e-6");  // kk = -5
  EXPECT_EQ(f64(1e-7), "1e-7");  // trace6.md §9.5
  EXPECT_EQ(f64(1.5e-7), "1.5e-7");
  EXPECT_EQ(f64(1.7976931348623157e308), "1.7976931348623157e308");
  EXPECT_EQ(f64(2.2250738585072014e-308), "2.2250738585072014e-308");
  EXPECT_EQ(f64(5e-324), "5e-324");  // smallest subnormal
}

TEST(JsonFloat, NonFiniteIsNull) {
  EXPECT_EQ(f64(std::numeric_limits<double>::quiet_NaN()), "null");
  EXPECT_EQ(f64(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(f64(-std::numeric_limits<double>::infinity()), "null");
}

// Whatever the layout, the text reads back as the same double.
TEST(JsonFloat, RoundTripsExactly) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    std::uint64_t bits = rng();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    if (!std::isfinite(v)) continue;
    const std::string s = f64(v);
    EXPECT_EQ(std::strtod(s.c_str(), nullptr), v) << s;
  }
}

}  // namespace
