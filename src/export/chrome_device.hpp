// Device work in the Chrome export (chrome.md §E8): the document's kernels, memcpys, memsets and
// syncs (TraceDocument::device_ops()) on tracks of their own, laid out like Kineto's GPU rows so
// a reader shows host and device side by side:
//
// - one process per device (pid 1000 + its ordinal, named after the device, `cuda:0`), one
//   thread per stream (`stream 7`); a slice that overlaps the one before it on its stream (it
//   should not: a stream runs its work in order) goes to `stream 7 #2`, … instead of misnesting;
// - syncs are waits, not work: cat `sync` on a track of their own per stream (`stream 7 sync`),
//   since a wait overlaps the work it waits for;
// - each slice covers the op's device time (`total_ns`) and carries the trace/6 fields in its args,
//   so the Chrome importer rebuilds the device op from them (chrome.md §E7);
// - a flow (cat `ac2g`, as Kineto's launch arrows) from the runtime call with the same
//   correlation, on its host track, to the device slice.
//
// Nothing here writes anything for a document without device ops: the export of a host-only
// trace stays byte for byte what it was.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "candle_graph/trace.hpp"
#include "export/chrome_json.hpp"
#include "trace/progress_counter.hpp"

namespace candle_graph::exporting {

// One device track: a (device, stream, sync or not, overflow number) lane of a device process.
struct DeviceLane {
  std::string_view device;
  std::optional<std::uint64_t> stream;
  bool sync = false;
  std::uint32_t overflow = 0;  // 0 = the stream's own track, 1… = `#2`, …
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
};

struct DeviceLayout {
  std::vector<std::string_view> devices;  // pid 1000 + k is devices[k]
  std::vector<DeviceLane> lanes;          // by (pid, stream, sync, overflow); tids 1… per pid
  std::vector<std::uint32_t> lane_of;     // per device op
  std::vector<std::uint32_t> order;       // device ops as written: per lane, in time order
};

// Places every device op of `doc` on a lane.
DeviceLayout layout_device_lanes(const TraceDocument& doc);

struct DeviceExportStats {
  std::uint64_t slices = 0;  // kernels, memcpys, memsets and syncs written
  std::uint64_t launch_flows = 0;
  std::uint64_t overflowed = 0;  // slices moved to an overflow lane of their stream
};

// The slices, in `layout.order`, each one event of `progress`.
void write_device_slices(ChromeJson& w, const TraceDocument& doc, const DeviceLayout& layout,
                         DeviceExportStats& stats, ProgressCounter& progress);

// Host ops as the host layout placed them: per op of doc.ops() its tid on pid 1 (0 when not
// written) and the time (µs) where a flow binds to it.
struct HostPlacement {
  const std::vector<std::uint32_t>& op_tid;
  const std::vector<double>& op_bind_us;
};

// One `s`/`f` pair per device op whose correlation a written runtime call has (the first such call
// in document order, as device time attribution does), ids from `flow_id` + 1 on. Each device op
// is one event of `progress`.
void write_launch_flows(ChromeJson& w, const TraceDocument& doc, const DeviceLayout& layout,
                        const HostPlacement& host, std::uint64_t& flow_id, DeviceExportStats& stats,
                        ProgressCounter& progress);

// `process_name`, `process_sort_index`, `thread_name`, `thread_sort_index` of the device tracks.
void write_device_metadata(ChromeJson& w, const DeviceLayout& layout);

}  // namespace candle_graph::exporting
