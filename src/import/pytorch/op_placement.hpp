// Ops and memory events of the measured region, each placed in the innermost span open when it
// happened: CPU ops and runtime calls at their start, device work (kernels, memcpys, memsets,
// syncs) at its launch (the runtime call or ac2g flow start with the same correlation id), memory
// events at their timestamp.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "import/pytorch/memory_pairing.hpp"
#include "import/pytorch/span_plan.hpp"

namespace candle_graph::import::pytorch {

struct PlacedOp {
  std::int64_t ts = 0;   // own start (source ns)
  std::int64_t key = 0;  // time used to find the span (the launch for device ops)
  std::uint32_t slice = 0;
  std::uint32_t span = 0;  // index into SpanPlan::drafts
};

struct PlacedOps {
  std::vector<PlacedOp> ops;       // by own start
  std::int32_t first_device = -1;  // lowest GPU index among the device ops kept
};

PlacedOps place_ops(const Model& m, const EventLists& lists, const Region& region,
                    const SpanPlan& plan, RepairCounts& repairs);

struct PlacedMemory {
  std::vector<PairedMemory> events;
  std::vector<std::uint32_t> span;  // parallel to events: index into SpanPlan::drafts
};

// `m.memory` is sorted in place (memory_pairing.hpp).
PlacedMemory place_memory(Model& m, const Region& region, const SpanPlan& plan,
                          RepairCounts& repairs);

// Each draft's step, inherited from its ancestors when it has none (for memory categories).
std::vector<std::optional<ExecutionStep>> inherited_steps(const SpanPlan& plan);

}  // namespace candle_graph::import::pytorch
