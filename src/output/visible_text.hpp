// Text from a trace (names, ids) shown to a person, on a terminal or in a Markdown file they may
// `cat`: a control character in it would move the cursor, clear the screen, retitle the window or
// start a line that poses as the output's own. Each is shown as an escape instead.
#pragma once

#include <string>
#include <string_view>

namespace candle_graph::output {

// `text` with each C0 control character and DEL as `\xNN` and each C1 control (U+0080–U+009F,
// which some terminals obey like ESC sequences) as `\uNNNN`; everything else, other non-ASCII
// text included, unchanged.
std::string visible_text(std::string_view text);

}  // namespace candle_graph::output
