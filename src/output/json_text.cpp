#include "output/json_text.hpp"

#include <charconv>
#include <cmath>
#include <cstring>

namespace candle_graph::output {
namespace {

constexpr char kHex[] = "0123456789abcdef";

// Length of the well-formed UTF-8 sequence starting at s[i], or 0 when it is malformed.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) noexcept {
  const auto b0 = static_cast<unsigned char>(s[i]);
  const std::size_t left = s.size() - i;
  auto cont = [&](std::size_t k) { return (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80; };
  if (b0 < 0x80) return 1;
  if (b0 >= 0xC2 && b0 <= 0xDF) return left >= 2 && cont(1) ? 2 : 0;
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    if (left < 3 || !cont(1) || !cont(2)) return 0;
    const auto b1 = static_cast<unsigned char>(s[i + 1]);
    if (b0 == 0xE0 && b1 < 0xA0) return 0;   // overlong
    if (b0 == 0xED && b1 >= 0xA0) return 0;  // surrogate
    return 3;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    if (left < 4 || !cont(1) || !cont(2) || !cont(3)) return 0;
    const auto b1 = static_cast<unsigned char>(s[i + 1]);
    if (b0 == 0xF0 && b1 < 0x90) return 0;   // overlong
    if (b0 == 0xF4 && b1 >= 0x90) return 0;  // beyond U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

bool is_valid_utf8(std::string_view s) noexcept {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

namespace {

// True when one of the 8 bytes of `w` needs escaping or UTF-8 checking: a control character
// (< 0x20), `"`, `\\` or a byte ≥ 0x80. The classic exact "has byte less than / equal to" tests.
bool word_needs_care(std::uint64_t w) noexcept {
  constexpr std::uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  const std::uint64_t quote = w ^ (ones * '"'), backslash = w ^ (ones * '\\');
  const std::uint64_t control = (w - ones * 0x20) & ~w;
  const std::uint64_t is_quote = (quote - ones) & ~quote;
  const std::uint64_t is_backslash = (backslash - ones) & ~backslash;
  return ((control | is_quote | is_backslash | w) & highs) != 0;
}

bool plain_byte(unsigned char c) noexcept {
  return c >= 0x20 && c != '"' && c != '\\' && c < 0x80;
}

}  // namespace

char* write_json_string(char* out, std::string_view s) noexcept {
  *out++ = '"';
  const char* p = s.data();
  const std::size_t n = s.size();
  std::size_t i = 0;
  // Plain ASCII (nearly every id and name) is checked and copied 8 bytes at a time, the last
  // bytes as one word overlapping the previous one, and strings of 4-7 bytes as two
  // overlapping 4-byte halves tested as one word: no per-byte loop unless a byte needs care.
  if (n >= 8) {
    for (; i + 8 <= n; i += 8) {
      std::uint64_t w;
      std::memcpy(&w, p + i, 8);
      if (word_needs_care(w)) break;
      std::memcpy(out + i, &w, 8);
    }
    if (i + 8 > n && i < n) {  // a clean prefix and a tail: the tail's word overlaps it
      std::uint64_t w;
      std::memcpy(&w, p + n - 8, 8);
      if (!word_needs_care(w)) {
        std::memcpy(out + n - 8, &w, 8);
        i = n;
      }
    }
  } else if (n >= 4) {
    std::uint32_t a, b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + n - 4, 4);
    if (!word_needs_care(std::uint64_t{a} | std::uint64_t{b} << 32)) {
      std::memcpy(out, &a, 4);
      std::memcpy(out + n - 4, &b, 4);
      i = n;
    }
  }
  out += i;
  if (i == n) {
    *out++ = '"';
    return out;
  }
  while (i < n) {
    const auto c = static_cast<unsigned char>(p[i]);
    if (plain_byte(c)) {
      *out++ = static_cast<char>(c);
      ++i;
      continue;
    }
    if (c >= 0x80) {
      const std::size_t len = utf8_sequence_length(s, i);
      if (len != 0) {
        std::memcpy(out, p + i, len);
        out += len;
        i += len;
      } else {
        std::memcpy(out, "\xEF\xBF\xBD", 3);  // U+FFFD for one malformed byte
        out += 3;
        ++i;
      }
      continue;
    }
    *out++ = '\\';
    switch (c) {
      case '"':
        *out++ = '"';
        break;
      case '\\':
        *out++ = '\\';
        break;
      case '\b':
        *out++ = 'b';
        break;
      case '\f':
        *out++ = 'f';
        break;
      case '\n':
        *out++ = 'n';
        break;
      case '\r':
        *out++ = 'r';
        break;
      case '\t':
        *out++ = 't';
        break;
      default: {
        const char esc[5] = {'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
        std::memcpy(out, esc, 5);
        out += 5;
      }
    }
    ++i;
  }
  *out++ = '"';
  return out;
}

void append_json_string(std::string& out, std::string_view s) {
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    if (word_needs_care(w)) break;
  }
  while (i < s.size() && plain_byte(static_cast<unsigned char>(s[i]))) ++i;
  if (i == s.size()) {  // nothing to escape: one copy, no worst-case sizing
    out.push_back('"');
    out.append(s);
    out.push_back('"');
    return;
  }
  const std::size_t old = out.size();
  out.resize(old + 6 * s.size() + 2);
  char* end = write_json_string(out.data() + old, s);
  out.resize(static_cast<std::size_t>(end - out.data()));
}

void append_u64(std::string& out, std::uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void append_i64(std::string& out, std::int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void append_f64(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out.append("null");
    return;
  }
  if (v == 0) {
    out.append(std::signbit(v) ? "-0.0" : "0.0");
    return;
  }
  // Shortest round-trip digits from the standard library, then ryu's layout rules
  // (ryu::pretty::format64): decimal for exponents -5 < kk <= 16, scientific otherwise.
  char sci[40];
  auto r = std::to_chars(sci, sci + sizeof sci, v, std::chars_format::scientific);
  std::string_view text(sci, static_cast<std::size_t>(r.ptr - sci));
  if (text.front() == '-') {
    out.push_back('-');
    text.remove_prefix(1);
  }
  const std::size_t e_pos = text.find('e');
  std::string digits;
  for (char ch : text.substr(0, e_pos))
    if (ch != '.') digits.push_back(ch);
  int exp10 = 0;
  std::from_chars(text.data() + e_pos + 1 + (text[e_pos + 1] == '+'), text.data() + text.size(),
                  exp10);
  const int length = static_cast<int>(digits.size());
  const int kk = exp10 + 1;  // position of the decimal point relative to the digits
  if (length <= kk && kk <= 16) {
    out.append(digits);
    out.append(static_cast<std::size_t>(kk - length), '0');
    out.append(".0");
  } else if (0 < kk && kk <= 16) {
    out.append(digits, 0, static_cast<std::size_t>(kk));
    out.push_back('.');
    out.append(digits, static_cast<std::size_t>(kk));
  } else if (-5 < kk && kk <= 0) {
    out.append("0.");
    out.append(static_cast<std::size_t>(-kk), '0');
    out.append(digits);
  } else {
    out.push_back(digits[0]);
    if (length > 1) {
      out.push_back('.');
      out.append(digits, 1);
    }
    out.push_back('e');
    append_i64(out, kk - 1);
  }
}

}  // namespace candle_graph::output
