// `[memory]` instants -> trace/6 alloc/free pairs, matched by (device, address). Negative Bytes
// is a free. Only what happens inside the measured window is kept; what breaks trace/6's pairing
// rules is repaired and counted (see memory_pairing.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "import/trace_event/event_model.hpp"

namespace candle_graph::import::pytorch {

using trace_event::kNone;
using trace_event::MemoryInstant;

struct PairedMemory {
  std::int64_t ts_ns = 0;
  std::uint64_t tensor = 0;  // allocation number: tensor id "mem-<n>"
  std::uint32_t device = kNone;
  std::uint64_t bytes = 0;
  bool alloc = true;
};

// `memory` is sorted in place by (timestamp, file order). Window is [begin, end] in source ns.
std::vector<PairedMemory> pair_memory(std::vector<MemoryInstant>& memory, std::int64_t begin,
                                      std::int64_t end,
                                      std::map<std::string, std::uint64_t>& repairs);

}  // namespace candle_graph::import::pytorch
