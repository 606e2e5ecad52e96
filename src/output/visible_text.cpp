#include "output/visible_text.hpp"

#include <cstdio>

namespace candle_graph::output {

std::string visible_text(std::string_view text) {
  std::string s;
  s.reserve(text.size());
  char escape[8];
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    if (c < 0x20 || c == 0x7F) {
      std::snprintf(escape, sizeof escape, "\\x%02x", c);
      s += escape;
    } else if (c == 0xC2 && next >= 0x80 && next <= 0x9F) {  // U+0080–U+009F in UTF-8
      std::snprintf(escape, sizeof escape, "\\u%04x", next);
      s += escape;
      ++i;
    } else {
      s += static_cast<char>(c);
    }
  }
  return s;
}

}  // namespace candle_graph::output
