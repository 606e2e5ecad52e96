// Device time per host op and per span (trace6.md §4.5.1): every kernel, memcpy, memset and sync
// of the document is attached to the host op that launched it — the runtime call with the same
// correlation id, then the innermost host op that encloses that call on its thread — never by
// Kineto's External id, which is not unique in real files. Device work with no launching op is
// counted as unattributed, never lost: Σ op device self time + unattributed = all device time.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "candle_graph/trace_document.hpp"

namespace candle_graph::device {

struct DeviceTime {
  // Per device op of doc.device_ops(): its runtime call and the host op it is attributed to
  // (indices into doc.ops()), or kNoIndex (always for syncs).
  std::vector<std::uint32_t> launch_call;
  std::vector<std::uint32_t> launcher;
  // Per host op of doc.ops(): the device time of the work it launched itself (PyTorch's Self
  // CUDA) and with that of its descendants (CUDA total). Runtime calls keep 0: their work is their
  // enclosing op's.
  std::vector<std::uint64_t> op_self_ns;
  std::vector<std::uint64_t> op_total_ns;
  // Per span: the device time of the work launched in it (self) and in its subtree (total).
  std::vector<std::uint64_t> span_self_ns;
  std::vector<std::uint64_t> span_total_ns;
  // Every kernel's, memcpy's and memset's duration, summed. Syncs (a stream or event wait) keep no
  // device busy: they are summed apart and attributed to no op.
  std::uint64_t device_ns = 0;
  std::uint64_t sync_ns = 0;
  std::uint64_t unattributed_ns = 0;  // the part no host op launched
  std::uint64_t unattributed_ops = 0;
  std::uint64_t without_launch_record = 0;  // device ops whose correlation no runtime call has
};

// `op_parent`: per op of doc.ops(), the op that encloses it on its thread (kNoIndex at top
// level), as HostNesting::parent or graph/3's op nodes give it.
DeviceTime attribute_device_time(const TraceDocument& doc,
                                 std::span<const std::uint32_t> op_parent);

// A device op's duration on the device.
inline std::uint64_t device_duration(const OpEvent& op) noexcept {
  return op.total_ns.value_or(op.duration_ns);
}

}  // namespace candle_graph::device
