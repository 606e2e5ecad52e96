// Host ops nested by their extents on their thread (trace6.md §4.5.1): the rule of PyTorch's
// profiler (pytorch.md §G9). Derived from the document once, like its span links, by the stages
// that need true self times (graph/3's op nodes) or the op that launched device work (device).
#pragma once

#include <cstdint>
#include <vector>

#include "candle_graph/trace_document.hpp"

namespace candle_graph {

struct HostNesting {
  // Per op of doc.ops(): the op that encloses it on its thread (kNoIndex for a top-level op), its
  // inclusive time (total_ns, else duration_ns) and its exclusive time (total minus the totals of
  // its direct children).
  std::vector<std::uint32_t> parent;
  std::vector<std::uint64_t> total_ns;
  std::vector<std::uint64_t> self_ns;
  // Ops that start inside an op and end after it: PyTorch's rule gives them no parent there, so
  // their time is counted twice; health names them (host_nesting_broken).
  std::uint64_t partial_overlaps = 0;
};

// Linear after one sort of the ops by (thread, start, longer first, stream order).
HostNesting nest_host_ops(const TraceDocument& doc);
// nest_host_ops(doc).partial_overlaps without the per-op results (20 bytes per op).
std::uint64_t count_partial_overlaps(const TraceDocument& doc);

// The same rule over plain intervals (an importer nests its ops before it emits them): parallel
// vectors of lane (thread), start and inclusive duration.
HostNesting nest_intervals(const std::vector<std::uint64_t>& lanes,
                           const std::vector<std::uint64_t>& starts,
                           const std::vector<std::uint64_t>& totals);

// An op's end on the host clock: timestamp + inclusive time.
inline std::uint64_t host_end(const OpEvent& op) noexcept {
  const std::uint64_t total = op.total_ns.value_or(op.duration_ns);
  const std::uint64_t end = op.timestamp_ns + total;
  return end < op.timestamp_ns ? UINT64_MAX : end;
}

}  // namespace candle_graph
