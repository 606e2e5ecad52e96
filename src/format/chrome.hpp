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

// Device work (chrome.md §E8): `cat` of a kernel, memcpy or memset slice, and of a sync, which is
// a wait on the device, not work, and is marked so for the reader.
inline constexpr std::string_view kDeviceCategory = "device";
inline constexpr std::string_view kSyncCategory = "sync";
// The flow from a runtime call to the device work it launched: Kineto's own name for it, so a
// reader that knows Kineto's launch arrows draws ours the same way.
inline constexpr std::string_view kLaunchFlowCategory = "ac2g";
// Device processes are pid 1000 + the device's ordinal (chrome.md §5 rule 1); pid 1 is the run.
inline constexpr unsigned kFirstDevicePid = 1000;

}  // namespace candle_graph::format::chrome
