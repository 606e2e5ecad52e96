// Turns the samples of a capture into trace/6 `op` and `memory` events (std-only unit: it runs
// after the measured region ended, so its formatting cost is never part of the measured time).
#pragma once

#include <cstdint>

#include "capture_state.hpp"

namespace candle_graph::libtorch::detail {

struct WrittenEvents {
  std::uint64_t ops = 0;
  std::uint64_t allocs = 0;
  std::uint64_t frees = 0;
  std::uint64_t live_at_end = 0;
  std::uint64_t live_bytes_at_end = 0;
  std::uint64_t peak_bytes = 0;
};

WrittenEvents write_events(const CaptureState& state, TraceSession& session);

}  // namespace candle_graph::libtorch::detail
