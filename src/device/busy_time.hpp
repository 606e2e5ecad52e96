// How long the devices were busy: per device, the union of its kernels', memcpys' and memsets'
// intervals over every stream (two streams running at once count once). Syncs are waits and keep
// no device busy.
#pragma once

#include <cstdint>

#include "candle_graph/trace_document.hpp"

namespace candle_graph::device {

// Σ over devices of the union of that device's work intervals.
std::uint64_t busy_ns(const TraceDocument& doc);

}  // namespace candle_graph::device
