#include "output/visible_text.hpp"

namespace candle_graph::output {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_hex(std::string& out, unsigned char c) {
  out += kHex[c >> 4];
  out += kHex[c & 15];
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
