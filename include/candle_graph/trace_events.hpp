// The nine trace/6 event kinds (docs/format/trace6.md §4), one value struct each, and the one
// function that writes an event as its compact JSON line (trace6.md §5.3 field order and omission
// rules). Events hold views (std::string_view, std::span) into storage their creator owns: a
// TraceDocument's arena, or the caller's own strings. Standard library only.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <variant>

#include "candle_graph/trace_format.hpp"

namespace candle_graph {

struct Tag {
  std::string_view key;
  std::string_view value;
  bool operator==(const Tag&) const = default;
};

// Extension (trace6.md §4.2.1): one ProfilerStep#N of the source a trace was imported from, with
// its wall time on the host and the time its device work kept the devices busy.
struct ProfilerStepRecord {
  std::uint64_t step = 0;
  std::uint64_t wall_ns = 0;
  std::uint64_t device_busy_ns = 0;
  bool operator==(const ProfilerStepRecord&) const = default;
};

// trace6.md §4.2 run metadata, flattened into the meta event.
struct TraceRunMeta {
  std::string_view run_id;
  std::string_view correlation_id;
  std::string_view entrypoint;
  ExecutionPhase phase = ExecutionPhase::train;
  std::string_view timestamp;
  std::uint64_t capture_step = 0;
  std::uint64_t warmup_steps = 0;
  std::string_view device;
  bool measured_region_device_synchronized = false;
  TimingMode timing_mode = TimingMode::host;
  std::span<const Tag> tags;  // sorted by key, unique keys
  std::optional<std::string_view> candle_version;
  // Extension (trace6.md §4.2.1): every profiler step of the source, in order; the measured one
  // is capture_step. Empty for traces that were not imported from a profiler with steps.
  std::span<const ProfilerStepRecord> profiler_steps;
  // The value of the tag `key`, if the run has it.
  std::optional<std::string_view> find_tag(std::string_view key) const;
  // The tag `key` as a whole number of type T, if the run has it and all of it is one in T's
  // range; else nullopt (tags are free text to other producers, and a file may be hand-edited).
  template <typename T>
  std::optional<T> find_number_tag(std::string_view key) const {
    const std::optional<std::string_view> text = find_tag(key);
    if (!text) return std::nullopt;
    T v{};
    const char* end = text->data() + text->size();
    const auto [stop, ec] = std::from_chars(text->data(), end, v);
    if (ec != std::errc() || stop != end) return std::nullopt;
    return v;
  }
  bool operator==(const TraceRunMeta& o) const;
};

struct MetaEvent {
  std::string_view schema;
  TraceRunMeta run;
  bool operator==(const MetaEvent&) const = default;
};

struct SpanStartEvent {  // trace6.md §4.3
  std::string_view id;
  std::optional<std::string_view> parent_id;
  std::string_view name;
  std::uint64_t start_ns = 0;
  SpanKind span_kind = SpanKind::function;
  bool measured = false;
  std::optional<ExecutionStep> step;
  bool operator==(const SpanStartEvent&) const = default;
};

struct SpanEndEvent {  // trace6.md §4.4
  std::string_view id;
  std::uint64_t duration_ns = 0;
  bool operator==(const SpanEndEvent&) const = default;
};

// The collective a host op or a communication kernel belongs to, as PyTorch's
// `record_param_comms` records it (trace6.md §4.5.1): what lets the ranks of one run match the
// same collective call by its sequence number instead of by its position.
struct OpCollective {
  std::string_view name;             // "allreduce", "all_to_all", ... (PyTorch's `Collective name`)
  std::string_view process_group;    // the process group's name; empty when not recorded
  std::optional<std::uint64_t> seq;  // the group's sequence number of the call (`Seq`)
  bool operator==(const OpCollective&) const = default;
};

struct OpEvent {  // trace6.md §4.5
  std::string_view span_id;
  std::string_view op_name;
  std::span<const std::string_view> inputs;
  std::optional<std::string_view> output;
  std::span<const std::uint64_t> shape;
  std::string_view dtype;
  std::string_view device;
  std::uint64_t duration_ns = 0;
  std::uint64_t timestamp_ns = 0;
  std::optional<std::uint64_t> storage_bytes;        // always set after parsing (trace6.md §5.2)
  std::optional<std::uint64_t> input_storage_bytes;  // absent on the wire means 0
  // Extensions of this port (trace6.md §4.5.1), written after the original's fields and ignored
  // by the original's reader. Host ops and runtime calls nest by their extents on their thread;
  // device work is attached to the host op that launched it through its runtime call.
  OpKind op_kind = OpKind::host;
  // The inclusive extent from timestamp_ns: a host op's whole duration (duration_ns is then its
  // exclusive time, what the original reads as self time), or device work's time on the device
  // (its duration_ns is 0: it takes no host time).
  std::optional<std::uint64_t> total_ns;
  std::optional<std::uint64_t> lane;         // the host thread ("thread") or stream ("stream")
  std::optional<std::uint64_t> correlation;  // a runtime call and the device work it launched
  // Held apart (in the document's arena) because few ops have one: a pointer keeps every other op
  // small. Null when the op is no collective call.
  const OpCollective* collective = nullptr;
  bool operator==(const OpEvent& o) const;
};

struct TensorEvent {  // trace6.md §4.6
  std::string_view span_id;
  std::string_view tensor_id;
  std::span<const std::uint64_t> shape;
  std::string_view dtype;
  std::string_view device;
  bool requires_grad = false;
  std::optional<std::uint64_t> storage_bytes;  // always set after parsing (trace6.md §5.2)
  MemoryCategory category = MemoryCategory::other;
  bool operator==(const TensorEvent& o) const;
};

struct MemoryEvent {  // trace6.md §4.7
  std::uint64_t timestamp_ns = 0;
  std::string_view tensor_id;
  std::string_view span_id;
  std::optional<std::string_view> op_name;
  std::string_view device;
  std::uint64_t bytes = 0;
  std::span<const std::uint64_t> shape;
  std::string_view dtype;
  // The two one-byte fields side by side: 128 bytes per event instead of 136 (a parsed trace
  // holds one per memory line; the wire order of fields is the writer's, not this one).
  MemoryAction action = MemoryAction::alloc;
  MemoryCategory category = MemoryCategory::other;
  bool operator==(const MemoryEvent& o) const;
};

struct DeviceMemoryEvent {  // trace6.md §4.8
  std::uint64_t timestamp_ns = 0;
  std::string_view device;
  std::uint64_t used_bytes = 0;
  std::uint64_t free_bytes = 0;
  std::optional<std::uint64_t> reserved_bytes;
  bool operator==(const DeviceMemoryEvent&) const = default;
};

struct GradientEvent {  // trace6.md §4.9
  std::string_view event_id;
  std::string_view root;
  std::string_view key;
  GradientState state = GradientState::present;
  std::optional<double> norm;  // finite when present (JSON has no NaN)
  bool operator==(const GradientEvent&) const = default;
};

struct EdgeEvent {  // trace6.md §4.10
  std::string_view from_span;
  std::string_view to_span;
  std::uint64_t duration_ns = 0;
  bool operator==(const EdgeEvent&) const = default;
};

using TraceEvent = std::variant<MetaEvent, SpanStartEvent, SpanEndEvent, OpEvent, TensorEvent,
                                MemoryEvent, DeviceMemoryEvent, GradientEvent, EdgeEvent>;

// The wire name of an event's kind ("meta", "span_start", …).
std::string_view event_kind_name(const TraceEvent& event) noexcept;

// Append one event as compact JSON (the original's field order and omission rules), no newline.
void append_event_json(std::string& out, const TraceEvent& event);

}  // namespace candle_graph
