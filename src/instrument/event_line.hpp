// The instrumentation hot path's event formatter: one compact JSON line (ending in '\n') per
// event, byte-identical to the trace writer's append_event_json (trace6.md §5.3 field order and
// omission rules) — tests/instrument/event_line_test.cpp holds it to that — but written with a
// bumped pointer into a per-thread buffer: field names are compile-time literals, plain ASCII
// strings are copied without per-byte appends, and nothing is allocated. Strings that need escaping
// go through output::append_json_string, the one escaping rule of the project.
#pragma once

#include <cstdint>
#include <string_view>

#include "candle_graph/instrument.hpp"
#include "candle_graph/trace_events.hpp"

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

// record_op's line straight from the caller's record, with the session's span number, the
// resolved timestamp and storage bytes: the same bytes as format_line of the equivalent OpEvent
// (input_storage_bytes always written), without copying the record into one first.
std::string_view format_op_line(std::uint64_t span_number, const OpRecord& op,
                                std::uint64_t timestamp_ns, std::uint64_t storage_bytes);

// span_start (parent_id always present: a session span always has a parent) and span_end lines
// from span numbers: the same bytes as format_line of the equivalent events.
std::string_view format_span_start_line(std::uint64_t number, std::uint64_t parent,
                                        std::string_view name, std::uint64_t start_ns,
                                        SpanKind kind, bool measured,
                                        std::optional<ExecutionStep> step);
std::string_view format_span_end_line(std::uint64_t number, std::uint64_t duration_ns);

// Writes `s{n}` into `buf` (at least 24 bytes) and returns a view of it.
std::string_view format_span_id(std::uint64_t n, char* buf) noexcept;

}  // namespace candle_graph::detail
