#include "output/markdown_text.hpp"

#include <algorithm>
#include <cctype>
#include <cstddef>

#include "output/visible_text.hpp"

namespace candle_graph::output {
namespace {

// `|` as `\|`: in a table cell, a border otherwise (even inside a code span, in GFM).
std::string escape_pipes(std::string_view text) {
  std::string s;
  s.reserve(text.size() + 2);
  for (const char c : text) s += c == '|' ? std::string("\\|") : std::string(1, c);
  return s;
}

// `text` on one line (its control characters, line breaks included, visible as escapes), `|`
// escaped when it sits in a table cell.
std::string one_line(std::string_view text, bool in_table) {
  std::string visible = visible_text(text);
  return in_table ? escape_pipes(visible) : visible;
}

// `content` (the text, or the text made visible) in a code span whose fence is one backtick longer
// than the longest run of backticks in `text`, padded with a space each side when there is any
// (CommonMark strips one such space each side; a backtick at either end would otherwise join the
// fence).
std::string fenced(std::string_view text, std::string_view content) {
  std::size_t run = 0, longest = 0;
  for (const char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  if (longest == 0) return "`" + std::string(content) + "`";
  const std::string fence(longest + 1, '`');
  return fence + " " + std::string(content) + " " + fence;
}

std::string code_span(std::string_view text, bool in_table) {
  return fenced(text, one_line(text, in_table));
}

bool space_or_end(std::string_view s, std::size_t at) {
  return at >= s.size() || s[at] == ' ' || s[at] == '\t';
}

// Three or more `-` and nothing else but spaces and tabs: a thematic break.
bool dashes_only(std::string_view s) {
  std::size_t count = 0;
  for (const char x : s) {
    if (x == '-')
      ++count;
    else if (x != ' ' && x != '\t')
      return false;
  }
  return count >= 3;
}

// Where, at the start of `s`, CommonMark would open a block (a heading, a quote, a list, a
// thematic break, a code fence), the position of the character whose escape makes it plain text;
// npos when none would open. `s` has been through literal_inlines, so the other openers (`*`, `_`,
// `~`, `<`) already carry their backslash.
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
      return dashes_only(s) || space_or_end(s, 1) ? 0 : std::string_view::npos;
    case '+':
      return space_or_end(s, 1) ? 0 : std::string_view::npos;
    case '`':
      return run >= 3 ? 0 : std::string_view::npos;
    default:
      break;
  }
  const std::size_t digits = std::min(s.find_first_not_of("0123456789"), s.size());
  if (digits >= 1 && digits <= 9 && digits < s.size() && (s[digits] == '.' || s[digits] == ')') &&
      space_or_end(s, digits + 1))
    return digits;
  return std::string_view::npos;
}

bool ascii_punctuation(char c) {
  return std::ispunct(static_cast<unsigned char>(c)) != 0;
}

// A byte that is neither white space nor ASCII punctuation: part of a word, for CommonMark's
// flanking rules (a byte of a UTF-8 sequence counts as a letter).
bool word_byte(std::string_view s, std::size_t at) {
  if (at >= s.size()) return false;
  const auto u = static_cast<unsigned char>(s[at]);
  return u >= 0x80 || std::isalnum(u) != 0;
}

// Whether the character at `at` could be Markdown outside a code span: emphasis (`*`, and `_`
// unless inside a word, where it neither opens nor closes), a link or image (`[`), an HTML tag or
// autolink (`<`), a strikethrough (`~`), an entity (`&` before a letter or `#`), or a backslash
// escape (`\` before punctuation).
bool inline_markup(std::string_view s, std::size_t at) {
  switch (s[at]) {
    case '*':
    case '[':
    case '<':
    case '~':
      return true;
    case '_':
      return !(at > 0 && word_byte(s, at - 1) && word_byte(s, at + 1));
    case '&':
      return at + 1 < s.size() &&
             (std::isalpha(static_cast<unsigned char>(s[at + 1])) != 0 || s[at + 1] == '#');
    case '\\':
      return at + 1 < s.size() && ascii_punctuation(s[at + 1]);
    default:
      return false;
  }
}

// `s` with a backslash before each character that would be inline markup, except inside the code
// spans it holds: the findings quote names in code spans of their own, where a backslash would be
// shown. A run of backticks opens a span only when a run of the same length closes it.
std::string literal_inlines(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (std::size_t i = 0; i < s.size();) {
    if (s[i] == '`') {
      const std::size_t run = std::min(s.find_first_not_of('`', i), s.size()) - i;
      std::size_t close = i + run, end = std::string_view::npos;
      while ((close = s.find('`', close)) != std::string_view::npos) {
        const std::size_t length = std::min(s.find_first_not_of('`', close), s.size()) - close;
        if (length == run) {
          end = close + length;
          break;
        }
        close += length;
      }
      const std::size_t to = end == std::string_view::npos ? i + run : end;
      out.append(s.substr(i, to - i));
      i = to;
      continue;
    }
    if (inline_markup(s, i)) out += '\\';
    out += s[i++];
  }
  return out;
}

// Leading spaces as character references: a paragraph's and a table cell's are dropped, and four
// of them after a list marker would start a code block.
std::string leading_spaces_kept(std::string_view line) {
  const std::size_t spaces = std::min(line.find_first_not_of(' '), line.size());
  std::string kept;
  kept.reserve(line.size() + 4 * spaces);
  for (std::size_t i = 0; i < spaces; ++i) kept += "&#32;";
  return kept.append(line.substr(spaces));
}

// Text outside code spans: on one line, no inline markup, and in a table cell `|` escaped (after
// the markup's backslashes, which must not escape the cell's); elsewhere nothing that opens a
// block at its start.
std::string plain_text(std::string_view text, bool in_table) {
  std::string line = leading_spaces_kept(literal_inlines(visible_text(text)));
  if (in_table) return escape_pipes(line);
  const std::size_t at = block_opener(line);
  if (at != std::string_view::npos) line.insert(at, 1, '\\');
  return line;
}

}  // namespace

std::string markdown_code(std::string_view text) {
  return code_span(text, true);
}

std::string markdown_inline_code(std::string_view text) {
  return code_span(text, false);
}

std::string quoted_code(std::string_view text) {
  return fenced(text, text);
}

std::string markdown_line(std::string_view text) {
  return plain_text(text, false);
}

std::string markdown_cell(std::string_view text) {
  return plain_text(text, true);
}

}  // namespace candle_graph::output
