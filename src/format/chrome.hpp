// candle-graph's own Chrome Trace Event export (docs/format/chrome.md): the schema id in
// `otherData` and the categories and argument keys its slices carry. The export writes them and
// the Chrome importer reads them back, so both include this header. Constants only.
#pragma once

#include <string_view>

namespace candle_graph::format::chrome {

inline constexpr std::string_view kSchema = "candle-graph/chrome/1";

// `cat` of the `X` slices: one per span, one per op.
inline constexpr std::string_view kSpanCategory = "span";
inline constexpr std::string_view kOpCategory = "op";
// `cat` of the flow (`s`/`f`) pairs: trace edge events and graph/3 data edges.
inline constexpr std::string_view kEdgeFlowCategory = "edge";
inline constexpr std::string_view kDataFlowCategory = "data";

}  // namespace candle_graph::format::chrome
