// Text from a trace (names, ids, file names, messages that quote them) in a Markdown output stays
// on its line, whatever it holds: a line break would end the list item or table row it is in and
// let the rest pose as the document's own content (a heading, a finding, a table row).
#pragma once

#include <string>
#include <string_view>

namespace candle_graph::output {

// Inline code in a table cell: control characters, line breaks included, shown as escapes
// (visible_text.hpp), `|` escaped, and a fence one backtick longer than the longest run of
// backticks in the text (then padded with spaces), so that no backtick inside closes the span.
// Plain text gives `text`.
std::string markdown_code(std::string_view text);
// The same outside a table, where `|` is plain text.
std::string markdown_inline_code(std::string_view text);
// A name quoted as code inside a text that is not only Markdown (a finding, a warning, a health
// message: JSON strings first): `text` as it is, its control characters too (markdown_line
// shows them when the text is written as Markdown), with the fence of markdown_code when it holds
// backticks, so that `a`b` is `` a`b `` and not a span that ends inside the name.
std::string quoted_code(std::string_view text);
// Plain text on one line (a finding, a warning), shown as it is written: control characters,
// line breaks included, as escapes; a backslash before what would open a block at its start (a
// list item's text starts one: torchrec's range `## backward ##` would be a heading) and, outside
// the code spans the text holds (the findings quote names in them), before what would be inline
// markup (`__next__` would be bold, `[a](b)` a link, `<b>` HTML).
std::string markdown_line(std::string_view text);
// Plain text in a table cell: on one line, no inline markup, `|` escaped.
std::string markdown_cell(std::string_view text);

}  // namespace candle_graph::output
