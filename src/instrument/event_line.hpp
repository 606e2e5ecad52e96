// The instrumentation hot path's event formatter: one compact JSON line (ending in '\n') per
// event, byte-identical to the trace writer's append_event_json (§5.3 field order and omission
// rules) — tests/instrument/event_line_test.cpp holds it to that — but written with a bumped
// pointer into a per-thread buffer: field names are compile-time literals, plain ASCII strings
// are copied without per-byte appends, and nothing is allocated. Strings that need escaping go
// through output::append_json_string, the one escaping rule of the project.
#pragma once

#include <string_view>

#include "candle_graph/trace.hpp"

namespace candle_graph::detail {

// Each returns a view of this thread's line buffer, valid until the thread formats the next
// line. Events too large for the buffer (multi-KiB names) take append_event_json's path.
std::string_view format_line(const SpanStartEvent& e);
std::string_view format_line(const SpanEndEvent& e);
std::string_view format_line(const OpEvent& e);
std::string_view format_line(const TensorEvent& e);
std::string_view format_line(const MemoryEvent& e);
std::string_view format_line(const DeviceMemoryEvent& e);
std::string_view format_line(const GradientEvent& e);
std::string_view format_line(const EdgeEvent& e);

}  // namespace candle_graph::detail
