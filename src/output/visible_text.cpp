#include "output/visible_text.hpp"

#include <cstdint>
#include <utility>

namespace candle_graph::output {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_hex(std::string& out, unsigned char c) {
  out += kHex[c >> 4];
  out += kHex[c & 15];
}

// The code point of a Unicode bidirectional control that starts at byte `at` of `text`, and its
// length in UTF-8; 0 when there is none. These reorder the text around them on a terminal or in
// a rendered file (a name can then read as another, "Trojan Source"), and no name needs them.
std::pair<std::uint32_t, std::size_t> bidi_control_at(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) {
    return at + i < text.size() ? static_cast<unsigned char>(text[at + i]) : 0;
  };
  if (byte(0) == 0xD8 && byte(1) == 0x9C) return {0x061C, 2};  // ARABIC LETTER MARK
  if (byte(0) != 0xE2) return {0, 0};
  const unsigned char b1 = byte(1), b2 = byte(2);
  if (b1 == 0x80 && (b2 == 0x8E || b2 == 0x8F || (b2 >= 0xAA && b2 <= 0xAE)))
    return {0x2000u + (b2 & 0x3Fu), 3};  // LRM, RLM; LRE, RLE, PDF, LRO, RLO
  if (b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9) return {0x2040u + (b2 & 0x3Fu), 3};  // LRI … PDI
  return {0, 0};
}

}  // namespace

std::size_t append_visible(std::string& out, std::string_view text, std::size_t at) {
  const auto c = static_cast<unsigned char>(text[at]);
  if (c == '\n' || c == '\r' || c == '\t') {
    out += c == '\n' ? "\\n" : c == '\r' ? "\\r" : "\\t";
  } else if (c < 0x20 || c == 0x7F) {
    out += "\\x";
    append_hex(out, c);
  } else if (const auto next = at + 1 < text.size() ? static_cast<unsigned char>(text[at + 1]) : 0;
             c == 0xC2 && next >= 0x80 && next <= 0x9F) {  // U+0080–U+009F in UTF-8
    out += "\\u00";
    append_hex(out, next);
    return 2;
  } else if (const auto [code, length] = bidi_control_at(text, at); length != 0) {
    out += "\\u";
    append_hex(out, static_cast<unsigned char>(code >> 8));
    append_hex(out, static_cast<unsigned char>(code & 0xFF));
    return length;
  } else {
    out += static_cast<char>(c);
  }
  return 1;
}

std::string visible_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) at += append_visible(out, text, at);
  return out;
}

}  // namespace candle_graph::output
