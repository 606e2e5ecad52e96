// trace/6 → Chrome Trace Event JSON, object form (chrome.md §5), for ui.perfetto.dev,
// chrome://tracing and other trace-event readers:
//
//   {"traceEvents":[…], "displayTimeUnit":"ns", "otherData":{"schema":"candle-graph/chrome/1",
//    "trace_schema":…, "run_id":…, "correlation_id":…, "entrypoint":…, "phase":…,
//    "capture_step":N, "warmup_steps":N, "device":…, "timing_mode":…, "tags":{…}}}
//
// - pid 1 is the run. Spans (cat "span") and ops (cat "op") are `X` slices on tracks laid out by
//   export/chrome_tracks.hpp (tid 1 = main, 2… = overlap tracks). Their args carry the exact
//   trace/6 values (start_ns, duration_ns, …), so nothing is lost to the µs conversion.
// - Counters (`C`): "live memory DEVICE" {bytes} and "live memory DEVICE by category"
//   {activation, gradient, …} from the trace6.md §7.1 memory replay; "device memory DEVICE"
//   {used_bytes, free_bytes[, reserved_bytes]} from the device_memory checkpoints. Samples in time
//   order.
// - Flows (`s`/`f`, bp "e"): cat "edge" for trace edge events (span → span), cat "data" for the
//   graph's tensor data edges (the op that produced an input → the op that consumed it).
// - Device work (export/chrome_device.hpp): kernels, memcpys, memsets and syncs on one process
//   per device and one track per stream, with `ac2g` flows from the runtime calls that launched
//   them; nothing of it for a trace without device ops.
// - Metadata (`M`): process_name, thread_name, thread_sort_index.
//
// The text is streamed to the sink in ~1 MiB pieces; beyond the document the writer keeps
// per-span state and 16 bytes per op (placement for the data flows and the producer index), and,
// when there is device work, the host nesting (20 bytes per op), the device time attribution and
// about 40 bytes per device op (its lane and the write order).
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "candle_graph/trace.hpp"
#include "candle_graph/trace_io.hpp"
#include "export/chrome_json.hpp"
#include "format/chrome.hpp"

namespace candle_graph::exporting {

inline constexpr std::string_view kChromeSchema = format::chrome::kSchema;

struct ChromeExportStats {
  std::uint64_t spans = 0;
  std::uint64_t ops = 0;
  std::uint32_t tracks = 0;
  std::uint64_t clamped = 0;     // slices cut to fit into their parent
  std::uint64_t overflowed = 0;  // slices moved to an overlap track
  std::uint64_t edge_flows = 0;
  std::uint64_t data_flows = 0;
  std::uint64_t counter_samples = 0;
  std::uint64_t device_slices = 0;      // kernels, memcpys, memsets and syncs (chrome.md §E8)
  std::uint64_t device_overflowed = 0;  // of them, moved off their stream's own track
  std::uint64_t launch_flows = 0;       // runtime call → device work
  std::uint64_t bytes = 0;              // JSON text written (before any compression)
};

// Writes the whole document. The trace should be trusted (callers check health first): the
// layout follows parent links, and spans unreachable from a root (cycles) are not written.
// With `threads` above 1 the span and op slices are formatted in batches on that many threads
// and written in order: the same bytes. With `hand_over`, each batch's text goes to it whole
// instead of through `sink` (ChromeJson::Handover; the sink's copy of it was the main thread's).
// `progress` hears the document's events handled out of all the export's passes over them.
ChromeExportStats write_chrome_trace(const TraceDocument& doc,
                                     const std::function<void(std::string_view)>& sink,
                                     unsigned threads = 1,
                                     const ChromeJson::Handover& hand_over = {},
                                     const ProgressCallback& progress = {});

}  // namespace candle_graph::exporting
