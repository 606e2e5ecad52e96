// The pieces every event of the Chrome export starts with (chrome.md §5), shared by the host
// writer and the device tracks so that both write events the same way.
#pragma once

#include <cstdint>
#include <string_view>

#include "export/chrome_json.hpp"

namespace candle_graph::exporting {

// Starts an event: `{"ph":"X"` and the separator from the previous one.
inline void begin_event(ChromeJson& w, char ph) {
  const char member[] = {'"', 'p', 'h', '"', ':', '"', ph, '"'};
  w.begin(std::string_view(member, sizeof member));
}

// `"pid":P,"tid":T,"ts":X` after the event's name.
inline void where(ChromeJson& w, std::uint32_t pid, std::uint32_t tid, double ts_us) {
  w.key("pid").u64(pid);
  w.key("tid").u64(tid);
  w.key("ts").f64(ts_us);
}

}  // namespace candle_graph::exporting
