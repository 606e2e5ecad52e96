// trace6.md §7.1 step 1: the order in which the memory profile replays memory events.
#pragma once

#include <cstdint>
#include <vector>

#include "candle_graph/trace.hpp"

namespace candle_graph::memory {

// Indices of `events` ordered by (timestamp, alloc before free, tensor_id), ties in stream order.
std::vector<std::uint32_t> sorted_order(const std::vector<MemoryEvent>& events);

}  // namespace candle_graph::memory
