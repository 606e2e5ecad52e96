#include "export/chrome_tracks.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>

namespace candle_graph::exporting {
namespace {

constexpr std::uint64_t kForever = std::numeric_limits<std::uint64_t>::max();

std::uint64_t span_end(const SpanRecord& s) noexcept {
  const std::uint64_t e = s.start_ns + s.duration_ns;
  return e < s.start_ns ? kForever : e;
}

// An op's slice covers its inclusive extent (trace6.md §4.5.1), so nested ops lie inside it.
std::uint64_t op_end(const OpEvent& o) noexcept {
  const std::uint64_t e = o.timestamp_ns + o.total_ns.value_or(o.duration_ns);
  return e < o.timestamp_ns ? kForever : e;
}

// A child of a span (or of the top level) before placement: its raw interval.
struct Item {
  std::uint64_t start = 0, end = 0;
  std::uint32_t index = 0;
  bool is_op = false;
};

// Start first; at equal starts the longer one first (it is the one that can contain the other),
// spans before ops, then document order: parents are always emitted before what nests in them.
bool item_before(const Item& a, const Item& b) noexcept {
  if (a.start != b.start) return a.start < b.start;
  if (a.end != b.end) return a.end > b.end;
  if (a.is_op != b.is_op) return !a.is_op;
  return a.index < b.index;
}

double midpoint_us(std::uint64_t a, std::uint64_t b) noexcept {
  return static_cast<double>(a + (b - a) / 2) / 1000.0;
}

// Where a flow binds to a slice that children on its own track may cover: in the first stretch of
// the slice that no child covers, so that a reader finds the slice itself there, not a child.
struct FreeStretch {
  std::uint64_t from = 0;  // the stretch begins here: the slice's start, then each child's end
  bool found = false;
  double bind_us = 0;

  // A child [start, end] placed on the slice's own track (children come in start order).
  void cover(std::uint64_t start, std::uint64_t end) {
    if (found) return;
    if (start > from) {
      bind_us = midpoint_us(from, start);
      found = true;
    } else {
      from = std::max(from, end);
    }
  }
  // Once every child is placed: the gap found, else the stretch after the last child, else (the
  // children cover it all) the slice's start.
  double bind(std::uint64_t slice_start, std::uint64_t slice_end) const {
    if (found) return bind_us;
    return from < slice_end ? midpoint_us(from, slice_end)
                            : static_cast<double>(slice_start) / 1000.0;
  }
};

// An op on a frame's own track that later ops (or spans) may nest in, as PyTorch's ops do
// (aten::linear > aten::addmm): its end, and the first stretch its nested children leave free,
// where flows bind to it rather than to a child.
struct OpenOp {
  std::uint64_t start = 0, end = 0;
  std::uint32_t index = 0;
  double ts_us = 0, dur_us = 0;
  FreeStretch free;
  bool has_children = false;
};

// A span being laid out: its interval, its track and its sorted children.
struct Frame {
  std::uint32_t tid = 1;
  std::uint64_t start = 0, end = kForever;
  std::vector<Item> items;
  std::size_t next = 0;
  bool has_last = false;
  std::uint64_t last_end = 0;  // end of the last child placed on this frame's own track
  std::uint32_t span = kNoIndex;
  FreeStretch free;          // where flows bind to the span
  std::vector<OpenOp> open;  // ops on this track that the next items may nest in, outermost first
};

// Compressed children lists: the items of parent p are list[begin[p], begin[p + 1]).
struct Children {
  std::vector<std::uint32_t> begin;
  std::vector<std::uint32_t> list;
};

Children group(std::size_t parents, const std::vector<std::uint32_t>& parent_of) {
  Children c;
  c.begin.assign(parents + 2, 0);  // slot `parents` collects the top level (unknown parent)
  auto slot = [&](std::uint32_t p) { return p == kNoIndex ? parents : p; };
  for (std::uint32_t p : parent_of) ++c.begin[slot(p) + 1];
  for (std::size_t i = 1; i < c.begin.size(); ++i) c.begin[i] += c.begin[i - 1];
  c.list.resize(parent_of.size());
  std::vector<std::uint32_t> fill(c.begin.begin(), c.begin.end() - 1);
  for (std::uint32_t i = 0; i < parent_of.size(); ++i) c.list[fill[slot(parent_of[i])]++] = i;
  return c;
}

// The middle of a leaf op: (start + end) / 2 ns, divided once, is the double nearest a number of
// tenths of a ns, which the writer prints as those digits (write_us_fast) instead of the long
// text of a sum of two doubles (61.785500000000006). Where doubles cannot hold it strictly inside
// the slice as a reader computes it (ts + dur), the sum the reader would compute.
double leaf_bind_us(const OpenOp& o) noexcept {
  const double mid = static_cast<double>(static_cast<unsigned __int128>(o.start) + o.end) / 2000.0;
  if (mid > o.ts_us && mid < o.ts_us + o.dur_us) return mid;
  return o.ts_us + o.dur_us / 2;
}

}  // namespace

void to_microseconds(std::uint64_t start_ns, std::uint64_t end_ns, double& ts_us, double& dur_us) {
  const double ts = static_cast<double>(start_ns) / 1000.0;
  const double end = static_cast<double>(end_ns) / 1000.0;
  ts_us = ts;
  // The plain (end − start) / 1000 when a reader's ts + dur lands exactly on `end` (nearly
  // always; it is also the shortest text).
  const double plain = static_cast<double>(end_ns - start_ns) / 1000.0;
  if (ts + plain == end) {
    dur_us = plain;
    return;
  }
  // Otherwise end − ts, which round-to-nearest puts on `end` except at exact ties; step by one
  // ulp until it is there (or is the largest value below it).
  double dur = end - ts;
  if (!(dur >= 0)) dur = 0;
  while (ts + dur > end && dur > 0) dur = std::nextafter(dur, 0.0);
  for (int i = 0; i < 4 && ts + dur < end; ++i) {
    const double up = std::nextafter(dur, std::numeric_limits<double>::infinity());
    if (ts + up > end) break;
    dur = up;
  }
  dur_us = dur;
}

TrackLayoutStats layout_tracks(const TraceDocument& doc,
                               const std::function<void(const PlacedSlice&)>& visit,
                               std::vector<double>* span_bind_us, std::vector<double>* op_bind_us) {
  doc.check_indexed();
  const std::size_t n = doc.spans().size();
  if (span_bind_us) span_bind_us->assign(n, 0.0);
  if (op_bind_us) op_bind_us->assign(doc.ops().size(), 0.0);
  // An op that nothing nests in binds at its middle; one with nested children in its first gap
  // (its start when they cover it all), as spans do.
  auto close_op = [&](const OpenOp& o) {
    if (op_bind_us)
      (*op_bind_us)[o.index] = o.has_children ? o.free.bind(o.start, o.end) : leaf_bind_us(o);
  };
  auto settle_gap = [&](const Frame& f) {  // the frame is done: where its flows bind
    if (span_bind_us && f.span != kNoIndex) (*span_bind_us)[f.span] = f.free.bind(f.start, f.end);
  };
  const Children spans = group(n, doc.span_parent());
  const Children ops = group(n, doc.op_span());

  TrackLayoutStats stats;
  // Overflow tracks by the time they become free (then by tid, so the layout is deterministic).
  using Free = std::pair<std::uint64_t, std::uint32_t>;
  std::priority_queue<Free, std::vector<Free>, std::greater<>> overflow;

  auto collect = [&](std::size_t slot, Frame& f) {
    for (std::uint32_t k = spans.begin[slot]; k < spans.begin[slot + 1]; ++k) {
      const std::uint32_t i = spans.list[k];
      f.items.push_back({doc.spans()[i].start_ns, span_end(doc.spans()[i]), i, false});
    }
    for (std::uint32_t k = ops.begin[slot]; k < ops.begin[slot + 1]; ++k) {
      const std::uint32_t i = ops.list[k];
      f.items.push_back({doc.ops()[i].timestamp_ns, op_end(doc.ops()[i]), i, true});
    }
    std::sort(f.items.begin(), f.items.end(), item_before);
  };

  std::vector<Frame> stack;
  stack.emplace_back();  // the top level: track 1, unbounded
  collect(n, stack.back());
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.next == f.items.size()) {
      for (auto o = f.open.rbegin(); o != f.open.rend(); ++o) close_op(*o);
      settle_gap(f);
      stack.pop_back();
      continue;
    }
    const Item item = f.items[f.next++];
    // Clamp into the parent.
    const std::uint64_t start = std::min(std::max(item.start, f.start), f.end);
    const std::uint64_t end = std::min(std::max(item.end, start), f.end);
    PlacedSlice slice;
    slice.is_op = item.is_op;
    slice.index = item.index;
    slice.clamped = start != item.start || end != item.end;
    if (slice.clamped) ++stats.clamped;
    // Ops that ended by this item's start can no longer hold it.
    while (!f.open.empty() && f.open.back().end <= start) {
      close_op(f.open.back());
      f.open.pop_back();
    }
    bool on_own_track = false;
    if (!f.open.empty() && end <= f.open.back().end) {
      slice.tid = f.tid;  // nests in the op that is still open, as in PyTorch's own view
      f.open.back().has_children = true;
      f.open.back().free.cover(start, end);
      on_own_track = true;
    } else if (f.open.empty() && (!f.has_last || start >= f.last_end)) {
      slice.tid = f.tid;  // nests in the parent, after its previous sibling
      f.has_last = true;
      f.last_end = end;
      f.free.cover(start, end);
      on_own_track = true;
    } else if (!overflow.empty() && overflow.top().first <= start) {
      slice.tid = overflow.top().second;
      overflow.pop();
      overflow.push({end, slice.tid});
      ++stats.overflowed;
    } else {
      slice.tid = ++stats.tracks;
      overflow.push({end, slice.tid});
      ++stats.overflowed;
    }
    to_microseconds(start, end, slice.ts_us, slice.dur_us);
    visit(slice);
    if (item.is_op) {
      OpenOp o{start, end, item.index, slice.ts_us, slice.dur_us, {start}};
      if (on_own_track && end > start)
        f.open.push_back(o);
      else
        close_op(o);  // on an overflow track, or empty: nothing nests in it
    } else {
      const std::uint32_t tid = slice.tid;
      Frame child;
      child.tid = tid;
      child.start = start;
      child.end = end;
      child.span = item.index;
      child.free.from = start;
      collect(item.index, child);
      if (child.items.empty())
        settle_gap(child);
      else
        stack.push_back(std::move(child));  // `f` is invalid from here
    }
  }
  return stats;
}

}  // namespace candle_graph::exporting
