// The capture's own cost over the measured region, as the capture stated it in its meta tags
// (libtorch.md §4.1: capture.overhead_estimate_ns and the figures it is made of). The evidence
// states it beside the measured total and adds a gap when it is a large share of that total; it
// never changes the trust verdict.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "candle_graph/trace_document.hpp"

namespace candle_graph::evidence {

// Above this share of the measured total the op and span times say as much about the capture as
// about the workload.
inline constexpr double kCaptureOverheadGapShare = 0.10;

struct CaptureOverhead {
  std::uint64_t estimate_ns = 0;
  std::uint64_t per_op_ns = 0;  // 0 when the tag is absent
  std::uint64_t ops = 0;
  std::uint64_t per_memory_event_ns = 0;  // 0 when memory capture was off
  std::uint64_t memory_events = 0;
  double share = 0;  // estimate_ns ÷ the measured total (0 when that is 0)
};

// From the meta tags; nullopt when the trace has no readable capture.overhead_estimate_ns (other
// producers, a capture under LibTorch's profiler).
std::optional<CaptureOverhead> read_capture_overhead(const TraceDocument& doc,
                                                     double measured_total_ms);

// `~0.31 ms (16.0% of the measured total, estimated from 412 recorded ops × 750 ns measured at
// start; a lower bound)`: the report's line and the headline's.
std::string describe_capture_overhead(const CaptureOverhead& overhead);

// The evidence gap when the share exceeds kCaptureOverheadGapShare, else nullopt.
std::optional<std::string> capture_overhead_gap(const CaptureOverhead& overhead);

}  // namespace candle_graph::evidence
