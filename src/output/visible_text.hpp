// Text from a trace (names, ids) shown to a person, on a terminal or in a Markdown file they may
// `cat`: a control character in it would move the cursor, clear the screen, retitle the window or
// start a line that poses as the output's own. Each is shown as an escape instead.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace candle_graph::output {

// `text` with each C0 control character and DEL as an escape (`\n`, `\r`, `\t`, else `\xNN`) and
// each C1 control (U+0080–U+009F, which some terminals obey like ESC sequences) as `\uNNNN`;
// everything else, other non-ASCII text included, unchanged.
std::string visible_text(std::string_view text);

// One step of visible_text: appends the character of `text` that starts at byte `at`, or its
// escape, to `out` and returns the bytes it took (1, or 2 for a C1 control); for callers that
// count or cut the characters as they go.
std::size_t append_visible(std::string& out, std::string_view text, std::size_t at);

}  // namespace candle_graph::output
