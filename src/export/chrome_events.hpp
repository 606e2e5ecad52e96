// The pieces every event of the Chrome export starts with (chrome.md §5), shared by the host
// writer and the device tracks so that both write events the same way.
#pragma once

#include <cstdint>
#include <string_view>

#include "candle_graph/trace_events.hpp"
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

// An op's collective identity (trace6.md §4.5.1) as args under the trace/6 field names, so that
// the Chrome importer rebuilds it and ranks can match the calls of a converted export.
inline void collective_args(ChromeJson& w, const OpEvent& o) {
  if (o.collective == nullptr) return;
  w.key("collective").str(o.collective->name);
  if (!o.collective->process_group.empty()) w.key("process_group").str(o.collective->process_group);
  if (o.collective->seq) w.key("collective_seq").u64(*o.collective->seq);
}

}  // namespace candle_graph::exporting
