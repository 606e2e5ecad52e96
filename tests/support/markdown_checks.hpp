// What a Markdown output's structure is read off in the tests and in the fuzz targets that check
// it: the cell borders of a table row, the control bytes of a text, and the first way a document
// breaks its own structure. No test framework here, so that the fuzz harness can use it as well.
#pragma once

#include <algorithm>
#include <cstddef>
#include <set>
#include <sstream>
#include <string>
#include <vector>

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

// A list item (`- `) whose text starts a heading (1–6 `#`, then a space or the end) or a block
// quote: its text is then no longer plain text.
inline bool opens_a_heading_or_quote(const std::string& line) {
  if (!line.starts_with("- ")) return false;
  const std::string text = line.substr(2);
  const std::size_t hashes = std::min(text.find_first_not_of('#'), text.size());
  return text.starts_with(">") ||
         (hashes >= 1 && hashes <= 6 && (hashes == text.size() || text[hashes] == ' '));
}

// What no name from a trace may change in a Markdown output: its headings are among `headings`,
// each once; no list item's text is a heading; every table row has its header's cells; no
// control byte but the line ends. The first violation, described with its line, or empty.
inline std::string markdown_structure_error(const std::string& md,
                                            const std::set<std::string>& headings) {
  if (control_bytes(md) != 0) return "a control byte in the Markdown";
  std::vector<std::string> lines;
  std::istringstream in(md);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::set<std::string> seen;
  std::size_t header = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.starts_with("#") && (!headings.contains(line) || !seen.insert(line).second))
      return "a heading the output does not write, or twice: " + line;
    if (opens_a_heading_or_quote(line)) return "a list item whose text is a heading: " + line;
    if (!line.starts_with("|")) continue;
    if (i == 0 || !lines[i - 1].starts_with("|")) header = cell_borders(line);
    if (cell_borders(line) != header) return "a table row without its header's cells: " + line;
  }
  return {};
}

}  // namespace candle_graph::testing
