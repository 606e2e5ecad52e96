// Where the line reader puts each event it parsed: the document assembler (reading on one thread)
// or a chunk recorder (reading on several: a thread records a chunk's events and, at the chunk's
// turn, replays them into the assembler, so that they arrive in file order). Events view
// transient buffers: a sink copies what it keeps before returning.
#pragma once

#include <cstdint>

#include "candle_graph/trace.hpp"

namespace candle_graph {

class EventSink {
 public:
  virtual ~EventSink() = default;
  // `line` is 1-based, counted from the start of what the reader was given.
  virtual void add(const TraceEvent& event, std::uint64_t line) = 0;
  virtual void add_span_start(const SpanStartEvent& e, std::uint64_t line) = 0;
  virtual void add_span_end(const SpanEndEvent& e, std::uint64_t line) = 0;
  virtual void add_op(const OpEvent& e, std::uint64_t line) = 0;
  virtual void add_tensor(const TensorEvent& e, std::uint64_t line) = 0;
  virtual void add_memory(const MemoryEvent& e, std::uint64_t line) = 0;
  virtual void add_device_memory(const DeviceMemoryEvent& e, std::uint64_t line) = 0;
  virtual void add_gradient(const GradientEvent& e, std::uint64_t line) = 0;
  virtual void add_edge(const EdgeEvent& e, std::uint64_t line) = 0;
};

}  // namespace candle_graph
