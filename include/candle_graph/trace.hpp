// The trace/6 protocol (spec §3–§5): enumerations, one struct per event kind, the parsed
// TraceDocument, and the reader/writer entry points.
//
// Memory layout: events hold std::string_view / std::span views into an Arena owned by the
// document, so a 300 MB trace becomes flat vectors of small structs with no per-event heap
// allocation. Views stay valid for the lifetime of the TraceDocument (moving it keeps them valid).
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "candle_graph/error.hpp"

namespace candle_graph {

inline constexpr std::string_view kTraceSchema = "candle-graph/trace/6";
inline constexpr std::uint32_t kNoIndex = std::numeric_limits<std::uint32_t>::max();

// ---- §3 enumerations (wire strings are lower snake_case) -------------------------------------

enum class ExecutionPhase : std::uint8_t { train, infer };
enum class ExecutionStep : std::uint8_t { forward, backward, optimizer };
enum class SpanKind : std::uint8_t { function, op, module };
enum class TimingMode : std::uint8_t { host, device_synchronized };
enum class GradientState : std::uint8_t { present, missing, zero, non_finite };
enum class MemoryAction : std::uint8_t { alloc, free };
enum class MemoryCategory : std::uint8_t { parameter, activation, gradient, optimizer, other };

std::string_view to_string(ExecutionPhase v) noexcept;
std::string_view to_string(ExecutionStep v) noexcept;
std::string_view to_string(SpanKind v) noexcept;
std::string_view to_string(TimingMode v) noexcept;
std::string_view to_string(GradientState v) noexcept;
std::string_view to_string(MemoryAction v) noexcept;
std::string_view to_string(MemoryCategory v) noexcept;

// Exact wire strings only (what the trace reader accepts).
std::optional<ExecutionPhase> parse_execution_phase(std::string_view s) noexcept;
std::optional<ExecutionStep> parse_execution_step(std::string_view s) noexcept;
std::optional<SpanKind> parse_span_kind(std::string_view s) noexcept;
std::optional<TimingMode> parse_timing_mode(std::string_view s) noexcept;
std::optional<GradientState> parse_gradient_state(std::string_view s) noexcept;
std::optional<MemoryAction> parse_memory_action(std::string_view s) noexcept;
std::optional<MemoryCategory> parse_memory_category(std::string_view s) noexcept;

// §3 human-friendly aliases (case-insensitive, '-' == '_'): "training", "eval", "bwd", "optim"…
std::optional<ExecutionPhase> parse_execution_phase_alias(std::string_view s);
std::optional<ExecutionStep> parse_execution_step_alias(std::string_view s);

// ---- §4.12–4.13 sizes and categories ---------------------------------------------------------

// Bytes per element of a dtype label (trimmed, ASCII-lowercased); nullopt when unknown.
std::optional<std::uint64_t> dtype_size(std::string_view dtype) noexcept;
// Saturating product of the dimensions, starting from 1 (an empty shape is one element).
std::uint64_t elem_count(std::span<const std::uint64_t> shape) noexcept;
// 0 when some dimension is 0 or the dtype is unknown; saturating otherwise.
std::uint64_t storage_bytes(std::span<const std::uint64_t> shape, std::string_view dtype) noexcept;
std::uint64_t resolve_storage_bytes(std::optional<std::uint64_t> explicit_bytes,
                                    std::span<const std::uint64_t> shape,
                                    std::string_view dtype) noexcept;
MemoryCategory category_for_step(std::optional<ExecutionStep> step, bool requires_grad) noexcept;

// ---- Arena: owns the bytes every view in a document points to -------------------------------

class Arena {
 public:
  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  std::string_view copy(std::string_view s);
  template <typename T>
  std::span<const T> copy(std::span<const T> items) {
    if (items.empty()) return {};
    void* p = allocate(items.size_bytes(), alignof(T));
    T* out = static_cast<T*>(p);
    for (std::size_t i = 0; i < items.size(); ++i) new (out + i) T(items[i]);
    return {out, items.size()};
  }
  std::size_t bytes_used() const noexcept { return used_; }

 private:
  void* allocate(std::size_t size, std::size_t align);
  std::vector<std::unique_ptr<std::byte[]>> blocks_;
  std::byte* cursor_ = nullptr;
  std::size_t remaining_ = 0;
  std::size_t used_ = 0;
};

// ---- §4 events -------------------------------------------------------------------------------

struct Tag {
  std::string_view key;
  std::string_view value;
  bool operator==(const Tag&) const = default;
};

// §4.2 run metadata, flattened into the meta event.
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
  bool operator==(const TraceRunMeta& o) const;
};

struct MetaEvent {
  std::string_view schema;
  TraceRunMeta run;
  bool operator==(const MetaEvent&) const = default;
};

struct SpanStartEvent {  // §4.3
  std::string_view id;
  std::optional<std::string_view> parent_id;
  std::string_view name;
  std::uint64_t start_ns = 0;
  SpanKind span_kind = SpanKind::function;
  bool measured = false;
  std::optional<ExecutionStep> step;
  bool operator==(const SpanStartEvent&) const = default;
};

struct SpanEndEvent {  // §4.4
  std::string_view id;
  std::uint64_t duration_ns = 0;
  bool operator==(const SpanEndEvent&) const = default;
};

struct OpEvent {  // §4.5
  std::string_view span_id;
  std::string_view op_name;
  std::span<const std::string_view> inputs;
  std::optional<std::string_view> output;
  std::span<const std::uint64_t> shape;
  std::string_view dtype;
  std::string_view device;
  std::uint64_t duration_ns = 0;
  std::uint64_t timestamp_ns = 0;
  std::optional<std::uint64_t> storage_bytes;        // always set after parsing (§5.2)
  std::optional<std::uint64_t> input_storage_bytes;  // absent on the wire means 0
  bool operator==(const OpEvent& o) const;
};

struct TensorEvent {  // §4.6
  std::string_view span_id;
  std::string_view tensor_id;
  std::span<const std::uint64_t> shape;
  std::string_view dtype;
  std::string_view device;
  bool requires_grad = false;
  std::optional<std::uint64_t> storage_bytes;  // always set after parsing (§5.2)
  MemoryCategory category = MemoryCategory::other;
  bool operator==(const TensorEvent& o) const;
};

struct MemoryEvent {  // §4.7
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

struct DeviceMemoryEvent {  // §4.8
  std::uint64_t timestamp_ns = 0;
  std::string_view device;
  std::uint64_t used_bytes = 0;
  std::uint64_t free_bytes = 0;
  std::optional<std::uint64_t> reserved_bytes;
  bool operator==(const DeviceMemoryEvent&) const = default;
};

struct GradientEvent {  // §4.9
  std::string_view event_id;
  std::string_view root;
  std::string_view key;
  GradientState state = GradientState::present;
  std::optional<double> norm;  // finite when present (JSON has no NaN)
  bool operator==(const GradientEvent&) const = default;
};

struct EdgeEvent {  // §4.10
  std::string_view from_span;
  std::string_view to_span;
  std::uint64_t duration_ns = 0;
  bool operator==(const EdgeEvent&) const = default;
};

using TraceEvent = std::variant<MetaEvent, SpanStartEvent, SpanEndEvent, OpEvent, TensorEvent,
                                MemoryEvent, DeviceMemoryEvent, GradientEvent, EdgeEvent>;

// The wire name of an event's kind ("meta", "span_start", …).
std::string_view event_kind_name(const TraceEvent& event) noexcept;

// ---- §5.2 document -------------------------------------------------------------------------

struct SpanRecord {
  std::string_view id;
  std::optional<std::string_view> parent_id;
  std::string_view name;
  SpanKind kind = SpanKind::function;
  bool measured = false;
  std::uint64_t start_ns = 0;
  bool closed = false;
  std::uint64_t duration_ns = 0;
  std::optional<ExecutionStep> step;
  bool operator==(const SpanRecord&) const = default;
};

class TraceDocument {
 public:
  TraceDocument();
  TraceDocument(TraceDocument&&) noexcept;
  TraceDocument& operator=(TraceDocument&&) noexcept;
  ~TraceDocument();

  // §5.2 assembly with all validations, for events built in memory. Strings and arrays are
  // copied into the document. Throws Error (with `source` as path and the 1-based event number
  // as line) on the first violation.
  static TraceDocument from_events(std::span<const TraceEvent> events,
                                   std::string_view source = "<events>");

  std::string_view schema;
  TraceRunMeta run;
  std::vector<SpanRecord> spans;  // stream (start) order, see docs/compatibility.md
  std::vector<OpEvent> ops;
  std::vector<TensorEvent> tensors;
  std::vector<MemoryEvent> memory;
  std::vector<DeviceMemoryEvent> device_memory;
  std::vector<GradientEvent> gradients;
  std::vector<EdgeEvent> edges;

  // Rebuild the derived indexes below after editing the public vectors by hand (analyses throw
  // if the indexes do not match the vectors' sizes). With duplicate ids the first span wins.
  void reindex();
  // Throws Error when the derived indexes no longer match the vectors (see reindex()).
  void check_indexed() const;

  // Index of the span with this id, or kNoIndex.
  std::uint32_t find_span(std::string_view id) const;
  // Number of distinct span ids (fewer than spans.size() when ids repeat; the index keeps the
  // first span of each id).
  std::size_t distinct_span_ids() const noexcept;
  // Derived links (kNoIndex when the referenced span does not exist), parallel to the vectors.
  const std::vector<std::uint32_t>& span_parent() const noexcept { return span_parent_; }
  const std::vector<std::uint32_t>& op_span() const noexcept { return op_span_; }
  const std::vector<std::uint32_t>& tensor_span() const noexcept { return tensor_span_; }
  const std::vector<std::uint32_t>& memory_span() const noexcept { return memory_span_; }

  // Number of events the document was built from (non-empty lines of the file).
  std::uint64_t event_count() const noexcept { return event_count_; }

  // Equality of content (the run, spans and every event list); arenas are not compared.
  bool operator==(const TraceDocument& o) const;

  Arena& arena() noexcept { return *arena_; }

 private:
  friend class DocumentAssembler;
  std::unique_ptr<Arena> arena_;
  struct SpanIndex;
  std::unique_ptr<SpanIndex> span_index_;
  std::vector<std::uint32_t> span_parent_;
  std::vector<std::uint32_t> op_span_;
  std::vector<std::uint32_t> tensor_span_;
  std::vector<std::uint32_t> memory_span_;
  std::uint64_t event_count_ = 0;
};

// ---- §5.1 reader / §5.3 writer --------------------------------------------------------------

struct ReadOptions {
  // Called now and then with (bytes read, total bytes) for progress on long reads.
  void (*progress)(std::uint64_t done, std::uint64_t total, void* user) = nullptr;
  void* progress_user = nullptr;
};

// Parse and validate a trace/6 JSONL file. Errors name the path and the 1-based line.
TraceDocument parse_trace(const std::filesystem::path& path, const ReadOptions& options = {});
// Same, over bytes in memory; `source` is the name used in error messages.
TraceDocument parse_trace_text(std::string_view text, std::string_view source = "<memory>");

// Parse one event line (no document-level validation). Views point into `arena`.
TraceEvent parse_event_line(std::string_view line, Arena& arena, std::string_view source = "<line>",
                            std::uint64_t line_number = 1);

// Append one event as compact JSON (the original's field order and omission rules), no newline.
void append_event_json(std::string& out, const TraceEvent& event);
// §5.3 to_events: meta, each span_start followed by its span_end, then ops, tensors, memory,
// device_memory, gradients, edges.
std::vector<TraceEvent> to_events(const TraceDocument& doc);
// Whole document as JSONL text.
std::string write_jsonl_string(const TraceDocument& doc);
// Write the document atomically (temp file + rename), creating parent directories.
void write_jsonl(const std::filesystem::path& path, const TraceDocument& doc);

}  // namespace candle_graph
