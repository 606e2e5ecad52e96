// What a Markdown output's structure is read off in the tests and in the fuzz targets that check
// it: the cell borders of a table row and the control bytes of a text. No test framework here, so
// that the fuzz harness can use it as well.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>

namespace candle_graph::testing {

// `|` not preceded by a backslash: the cell borders GFM sees.
inline std::size_t cell_borders(const std::string& line) {
  std::size_t borders = 0;
  for (std::size_t i = 0; i < line.size(); ++i)
    borders += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
  return borders;
}

// Bytes below 0x20 other than the line feed, and DEL.
inline std::size_t control_bytes(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && c != '\n') || u == 0x7f;
  }));
}

}  // namespace candle_graph::testing
