#include "output/markdown_text.hpp"

#include <algorithm>
#include <cstddef>

#include "output/visible_text.hpp"

namespace candle_graph::output {
namespace {

// `text` on one line (its control characters, line breaks included, visible as escapes), `|`
// escaped when it sits in a table cell.
std::string one_line(std::string_view text, bool in_table) {
  std::string visible = visible_text(text);
  if (!in_table) return visible;
  std::string s;
  s.reserve(visible.size() + 2);
  for (const char c : visible) s += c == '|' ? std::string("\\|") : std::string(1, c);
  return s;
}

std::string code_span(std::string_view text, bool in_table) {
  std::size_t run = 0, longest = 0;
  for (const char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string s = one_line(text, in_table);
  if (longest == 0) return "`" + s + "`";
  const std::string fence(longest + 1, '`');
  return fence + " " + s + " " + fence;
}

}  // namespace

std::string markdown_code(std::string_view text) {
  return code_span(text, true);
}

std::string markdown_inline_code(std::string_view text) {
  return code_span(text, false);
}

std::string markdown_line(std::string_view text) {
  return one_line(text, false);
}

std::string markdown_cell(std::string_view text) {
  return one_line(text, true);
}

}  // namespace candle_graph::output
