// A hand-written scanner for the lines our writer and the Rust crate emit (trace6.md §5.3: compact
// JSON, `kind` first, serde declaration order, absent optionals omitted), working on the raw bytes
// without simdjson. It accepts a line only when every byte is in that one canonical form: no
// whitespace, strings of printable ASCII without escapes, unsigned integers of at most 19 digits,
// every field of the kind in its place. Anything else (another field order, an unknown or
// duplicated field, `null`, an escape, a non-ASCII byte, a long or negative number…) is a bail
// out: the caller parses the line with the exact simdjson path, which decides and words every
// error. So the scanner accepts a subset of what that path accepts and yields the same event.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "candle_graph/trace.hpp"

namespace candle_graph {

class FastLineScanner {
 public:
  enum class Kind : std::uint8_t {
    none,  // not in the canonical form: parse the line with the simdjson path
    span_start,
    span_end,
    op,
    tensor,
    memory,
    device_memory,
    gradient,
    edge,
  };
  struct Result {
    Kind kind;
    const char* next;  // one past the line's '\n' (only when kind != none)
  };

  // Scans the line starting at `p`. The line must end with a '\n' somewhere, and at least 64
  // readable bytes must follow that '\n': the scanner compares field names of up to 23 bytes
  // and loads strings 16 bytes at a time before it knows where the line ends (it never takes
  // anything past the '\n'). The event (views into the line and into this scanner's buffers)
  // is valid until the next call.
  Result scan(const char* p);

  const SpanStartEvent& span_start() const noexcept { return span_start_; }
  const SpanEndEvent& span_end() const noexcept { return span_end_; }
  const OpEvent& op() const noexcept { return op_; }
  const TensorEvent& tensor() const noexcept { return tensor_; }
  const MemoryEvent& memory() const noexcept { return memory_; }
  const DeviceMemoryEvent& device_memory() const noexcept { return device_memory_; }
  const GradientEvent& gradient() const noexcept { return gradient_; }
  const EdgeEvent& edge() const noexcept { return edge_; }

  // The last event as a TraceEvent (tests; the reader uses the typed accessors).
  TraceEvent event(Kind kind) const;

 private:
  const char* scan_span_start(const char* p);
  const char* scan_span_end(const char* p);
  const char* scan_op(const char* p);
  const char* scan_tensor(const char* p);
  const char* scan_memory(const char* p);
  const char* scan_device_memory(const char* p);
  const char* scan_gradient(const char* p);
  const char* scan_edge(const char* p);

  const char* dims(const char* p, std::span<const std::uint64_t>& out);
  const char* strings(const char* p, std::span<const std::string_view>& out);

  SpanStartEvent span_start_;
  SpanEndEvent span_end_;
  OpEvent op_;
  TensorEvent tensor_;
  MemoryEvent memory_;
  DeviceMemoryEvent device_memory_;
  GradientEvent gradient_;
  EdgeEvent edge_;
  std::vector<std::uint64_t> dims_;
  std::vector<std::string_view> ids_;
};

}  // namespace candle_graph
