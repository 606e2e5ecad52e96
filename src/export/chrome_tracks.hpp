// Track (tid) assignment for the Chrome Trace Event export (chrome.md §5 rule 2):
// every span and op becomes one complete (`X`) slice on a track where slices nest strictly.
//
// - A child (span or op) is clamped into its parent's interval, so a child that started early or
//   ended late still nests.
// - An op (or span) that lies wholly inside an earlier op of the same span nests in it on the
//   same track, as PyTorch's ops do (aten::linear > aten::t, aten::addmm): the view reads like
//   the profiler's own.
// - Siblings that overlap in time otherwise cannot share a track: the later one goes to an
//   overflow track (with its whole subtree) instead of being dropped or misnested.
// - ns → µs: the slice's `ts` is the double nearest start_ns / 1000 and `dur` is chosen so that a
//   reader's `ts + dur` (double arithmetic, what speedscope and the trace viewer compute) lands on
//   the double nearest end_ns / 1000, never after it. Because both conversions are monotonic,
//   nesting in ns is nesting in µs: no 1-ns overlaps appear from rounding.
//
// Memory: per span (children lists, placement) plus one op index per op for the grouping; the
// slices themselves are handed to the visitor as they are placed (parents before children, each
// track's slices in time order), never stored.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "candle_graph/trace.hpp"

namespace candle_graph::exporting {

struct PlacedSlice {
  bool is_op = false;
  std::uint32_t index = 0;  // into doc.spans() or doc.ops()
  std::uint32_t tid = 1;    // 1 = the main track, 2… = overflow tracks
  double ts_us = 0;
  double dur_us = 0;
  bool clamped = false;  // the interval was cut to fit into its parent
};

// The µs pair for [start_ns, end_ns] (start ≤ end): ts = nearest double to start/1000, and the
// largest dur with ts + dur ≤ nearest double to end/1000 (equal in practice).
void to_microseconds(std::uint64_t start_ns, std::uint64_t end_ns, double& ts_us, double& dur_us);

struct TrackLayoutStats {
  std::uint32_t tracks = 1;  // main track included
  std::uint64_t clamped = 0;
  std::uint64_t overflowed = 0;  // slices that went to an overflow track
};

// Places every span and op of `doc` (parents before children; children in start order) and
// calls `visit` for each. Spans whose parent is unknown and ops whose span is unknown are laid
// out at the top level. When `span_bind_us` is given it receives, per span, a time (µs) inside
// the span's slice that no child on the same track covers (the middle of the first gap; the
// start when children cover it all): a flow event there binds to the span itself, not a child.
// `op_bind_us` gets the same per op: the middle of an op that nothing nests in.
TrackLayoutStats layout_tracks(const TraceDocument& doc,
                               const std::function<void(const PlacedSlice&)>& visit,
                               std::vector<double>* span_bind_us = nullptr,
                               std::vector<double>* op_bind_us = nullptr);

}  // namespace candle_graph::exporting
