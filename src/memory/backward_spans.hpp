// Which spans lie inside a backward subtree: the span itself or an ancestor has step `backward`
// (our fix of trace6.md §7.1's autograd retention, see docs/compatibility.md).
#pragma once

#include <cstdint>
#include <vector>

#include "candle_graph/trace.hpp"

namespace candle_graph::memory {

// One flag per span; linear and safe on parent cycles (untrusted documents reach compare).
std::vector<std::uint8_t> backward_subtree_flags(const TraceDocument& doc);

}  // namespace candle_graph::memory
