#include "output/markdown_text.hpp"

#include <algorithm>
#include <cctype>
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

bool space_or_end(std::string_view s, std::size_t at) {
  return at >= s.size() || s[at] == ' ' || s[at] == '\t';
}

// Three or more of `c` and nothing else but spaces and tabs: a thematic break.
bool thematic_break(std::string_view s, char c) {
  std::size_t count = 0;
  for (const char x : s) {
    if (x == c)
      ++count;
    else if (x != ' ' && x != '\t')
      return false;
  }
  return count >= 3;
}

// Where, at the start of `s`, CommonMark would open a block (a heading, a quote, a list, a
// thematic break, a code fence, an HTML block), the position of the character whose escape
// makes it plain text; npos when none would open.
std::size_t block_opener(std::string_view s) {
  if (s.empty()) return std::string_view::npos;
  const char c = s[0];
  const std::size_t run = std::min(s.find_first_not_of(c), s.size());
  switch (c) {
    case '#':
      return run <= 6 && space_or_end(s, run) ? 0 : std::string_view::npos;
    case '>':
      return 0;
    case '-':
    case '+':
    case '*':
    case '_':
      if (thematic_break(s, c) || (c != '_' && space_or_end(s, 1))) return 0;
      return std::string_view::npos;
    case '`':
    case '~':
      return run >= 3 ? 0 : std::string_view::npos;
    case '<':
      return s.size() > 1 && (std::isalpha(static_cast<unsigned char>(s[1])) || s[1] == '/' ||
                              s[1] == '!' || s[1] == '?')
                 ? 0
                 : std::string_view::npos;
    default:
      break;
  }
  const std::size_t digits = std::min(s.find_first_not_of("0123456789"), s.size());
  if (digits >= 1 && digits <= 9 && digits < s.size() && (s[digits] == '.' || s[digits] == ')') &&
      space_or_end(s, digits + 1))
    return digits;
  return std::string_view::npos;
}

}  // namespace

std::string markdown_code(std::string_view text) {
  return code_span(text, true);
}

std::string markdown_inline_code(std::string_view text) {
  return code_span(text, false);
}

std::string markdown_line(std::string_view text) {
  std::string line = one_line(text, false);
  const std::size_t at = block_opener(line);
  if (at != std::string_view::npos) line.insert(at, 1, '\\');
  return line;
}

std::string markdown_cell(std::string_view text) {
  return one_line(text, true);
}

}  // namespace candle_graph::output
