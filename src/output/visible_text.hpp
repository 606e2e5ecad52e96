// Text from a trace (names, ids) shown to a person, on a terminal or in a Markdown file they may
// `cat`: a control character in it would move the cursor, clear the screen, retitle the window or
// start a line that poses as the output's own, and a bidirectional control would make it read
// as other text. Each is shown as an escape instead.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace candle_graph::output {

// `text` with each C0 control character and DEL as an escape (`\n`, `\r`, `\t`, else `\xNN`),
// each C1 control (U+0080–U+009F, which some terminals obey like ESC sequences) and each
// bidirectional control (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069, which reorder the
// text around them) as `\uNNNN`; everything else, other non-ASCII text included, unchanged.
std::string visible_text(std::string_view text);

// One step of visible_text: appends the character of `text` that starts at byte `at`, or its
// escape, to `out` and returns the bytes it took (1; 2 or 3 for a C1 or bidirectional control;
// for callers that count or cut the characters as they go).
std::size_t append_visible(std::string& out, std::string_view text, std::size_t at);

}  // namespace candle_graph::output
