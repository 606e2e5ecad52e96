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

// The code point and UTF-8 length of a control that starts at byte `at` of `text` and is shown as
// `\uNNNN`; length 0 when there is none. C1 controls (U+0080–U+009F) some terminals obey like ESC
// sequences; bidirectional controls reorder the text around them on a terminal or in a rendered
// file (a name can then read as another, "Trojan Source"). No name needs either.
std::pair<std::uint32_t, std::size_t> unicode_control_at(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) {
    return at + i < text.size() ? static_cast<unsigned char>(text[at + i]) : 0;
  };
  const unsigned char b0 = byte(0), b1 = byte(1), b2 = byte(2);
  if (b0 == 0xC2 && b1 >= 0x80 && b1 <= 0x9F) return {b1, 2};  // C1
  if (b0 == 0xD8 && b1 == 0x9C) return {0x061C, 2};            // ARABIC LETTER MARK
  if (b0 != 0xE2) return {0, 0};
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
  } else if (const auto [code, length] = unicode_control_at(text, at); length != 0) {
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
