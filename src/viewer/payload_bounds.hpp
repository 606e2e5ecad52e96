// Keeps the viewer payload bounded for huge traces (a 1 M-op trace must give at most 50 MB
// of HTML, which a browser still opens): which graph nodes get full detail, and which memory
// timeline points are kept.
#pragma once

#include <cstdint>
#include <vector>

#include "candle_graph/analysis.hpp"
#include "evidence/op_table.hpp"

namespace candle_graph::viewer {

struct PayloadLimits {
  std::size_t full_detail_nodes = 20'000;  // below this every node is kept
  std::size_t top_spans = 3'000;           // slowest and heaviest spans kept beyond it
  std::size_t top_ops = 2'000;             // slowest and heaviest ops kept beyond it
  // Beyond full_detail_nodes no node deeper than this is kept: a kept node keeps its ancestors,
  // so one slow op at the end of a chain of a million spans kept the whole chain (880 MB of
  // HTML). Real traces nest tens of levels; a deeper node folds into its ancestor at this depth.
  std::size_t kept_depth = 256;
  // Beyond full_detail_nodes at most this many nodes are kept in all, whatever the shape: many
  // deep chains would otherwise keep top sets × kept_depth nodes.
  std::size_t kept_nodes = 60'000;
  std::size_t memory_buckets = 2'000;  // per device; min and max live bytes per bucket
  std::size_t peak_breakdown_rows = 1'000;
  // Rows of the Operators and Kernels tables each. Real traces have tens to hundreds of op names
  // and kernel names, but templated kernel names can be kilobytes long, so the count is capped.
  std::size_t table_rows = 2'000;
  // Device work drawn on the timeline's stream lanes. One training step rarely launches more than
  // a few thousand kernels; the cap keeps a 10^5-kernel trace's page small and quick to parse.
  std::size_t device_items = 20'000;
  // Streams and synchronizing calls listed per device on the Overview (a device has a handful).
  std::size_t overview_rows = 100;
};

struct NodeSelection {
  std::vector<bool> kept;  // per graph node
  // Per kept node: dropped descendants folded into it (the nearest kept ancestor).
  struct Folded {
    std::uint64_t spans = 0;
    std::uint64_t ops = 0;
    std::uint64_t self_time_ns = 0;
  };
  std::vector<Folded> folded;  // per graph node
  std::uint64_t kept_count = 0;
  std::uint64_t dropped_spans = 0;
  std::uint64_t dropped_ops = 0;
};

// All nodes when there are few; else the root, the top three levels, and the slowest and
// heaviest spans and ops, each with all its ancestors, in that order of priority (the ranked
// ones alternating between criteria) while at most `kept_nodes` are kept. A node deeper than
// `kept_depth` stands in for its ancestor at that depth. n·log n.
NodeSelection select_nodes(const ExecutionGraph& graph, const PayloadLimits& limits);

// Indices into `table.rows` to keep, ascending (so in the table's host-self order): all when there
// are at most `limit`; else the heaviest by device self time (half of the limit, rounded up) and
// the rest by host self time, so that sorting the viewer's table by either kind of time still
// shows the rows that matter most. n·log n.
std::vector<std::uint32_t> select_op_rows(const evidence::OpTable& table, std::size_t limit);

// Indices into doc.device_ops() to draw on the timeline, ordered by (device, stream, start, index):
// all when there are at most `limit`; else the `limit` longest by device time (ties: earlier in
// the document), so that the fitted timeline still shows where each stream spent its time and only
// the work too short to see at that zoom is left out. n·log n.
std::vector<std::uint32_t> select_device_work(const TraceDocument& doc, std::size_t limit);

// Indices into `timeline` to keep: all when small; else per device and time bucket the points of
// minimum and maximum live bytes, plus the first, last and the device peak. Sorted, unique.
std::vector<std::uint32_t> select_memory_points(const MemoryProfile& memory,
                                                const PayloadLimits& limits);

}  // namespace candle_graph::viewer
