// The parsed trace (docs/format/trace6.md §5.2): spans, ops, tensors, memory, device memory,
// gradients and edges as flat vectors, built once by an importer and read by every later stage.
//
// Memory layout: events hold std::string_view / std::span views into an Arena owned by the
// document, so a 300 MB trace becomes flat vectors of small structs with no per-event heap
// allocation. Views stay valid for the lifetime of the TraceDocument (moving it keeps them valid).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "candle_graph/error.hpp"
#include "candle_graph/trace_events.hpp"

namespace candle_graph {

inline constexpr std::uint32_t kNoIndex = std::numeric_limits<std::uint32_t>::max();

// Owns the bytes every view in a document points to.
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
  // Takes over everything `other` holds (its copies stay where they are); `other` is left empty.
  void absorb(Arena&& other);

 private:
  void* allocate(std::size_t size, std::size_t align);
  std::vector<std::unique_ptr<std::byte[]>> blocks_;
  std::byte* cursor_ = nullptr;
  std::size_t remaining_ = 0;
  std::size_t used_ = 0;
};

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

  // trace6.md §5.2 assembly with all validations, for events built in memory. Strings and arrays
  // are copied into the document. Throws Error (with `source` as path and the 1-based event number
  // as line) on the first violation.
  static TraceDocument from_events(std::span<const TraceEvent> events,
                                   std::string_view source = "<events>");

  // The document is read-only once built: importers build it (TraceDocumentBuilder, the
  // reader), every later stage reads it.
  std::string_view schema() const noexcept { return schema_; }
  const TraceRunMeta& run() const noexcept { return run_; }
  const std::vector<SpanRecord>& spans() const noexcept { return spans_; }  // stream order (T1)
  // Host ops and runtime calls (op_kind host or runtime), in stream order.
  const std::vector<OpEvent>& ops() const noexcept { return ops_; }
  // Work on a device (op_kind kernel, memcpy, memset, sync), in stream order: op events on the
  // wire, kept apart because they take no host time (trace6.md §4.5.1).
  const std::vector<OpEvent>& device_ops() const noexcept { return device_ops_; }
  const std::vector<TensorEvent>& tensors() const noexcept { return tensors_; }
  const std::vector<MemoryEvent>& memory() const noexcept { return memory_; }
  const std::vector<DeviceMemoryEvent>& device_memory() const noexcept { return device_memory_; }
  const std::vector<GradientEvent>& gradients() const noexcept { return gradients_; }
  const std::vector<EdgeEvent>& edges() const noexcept { return edges_; }

  // Throws Error when the derived indexes do not match the vectors (a document edited by a test
  // through DocumentEditor without DocumentEditor::reindex()).
  void check_indexed() const;

  // Index of the span with this id, or kNoIndex.
  std::uint32_t find_span(std::string_view id) const;
  // Number of distinct span ids (fewer than spans.size() when ids repeat; the index keeps the
  // first span of each id).
  std::size_t distinct_span_ids() const noexcept;
  // Derived links (kNoIndex when the referenced span does not exist), parallel to the vectors.
  const std::vector<std::uint32_t>& span_parent() const noexcept { return span_parent_; }
  const std::vector<std::uint32_t>& op_span() const noexcept { return op_span_; }
  const std::vector<std::uint32_t>& device_op_span() const noexcept { return device_op_span_; }
  const std::vector<std::uint32_t>& tensor_span() const noexcept { return tensor_span_; }
  const std::vector<std::uint32_t>& memory_span() const noexcept { return memory_span_; }

  // Number of events the document was built from (non-empty lines of the file).
  std::uint64_t event_count() const noexcept { return event_count_; }

  // Equality of content (the run, spans and every event list); arenas are not compared.
  bool operator==(const TraceDocument& o) const;

  // Bytes the document's strings and arrays take.
  std::size_t arena_bytes() const noexcept { return arena_->bytes_used(); }

 private:
  friend class DocumentAssembler;
  friend class DocumentEditor;
  // Rebuilds the derived indexes after an edit (DocumentEditor). With duplicate ids the first
  // span wins.
  void reindex();

  std::string_view schema_;
  TraceRunMeta run_;
  std::vector<SpanRecord> spans_;
  std::vector<OpEvent> ops_;
  std::vector<OpEvent> device_ops_;
  std::vector<TensorEvent> tensors_;
  std::vector<MemoryEvent> memory_;
  std::vector<DeviceMemoryEvent> device_memory_;
  std::vector<GradientEvent> gradients_;
  std::vector<EdgeEvent> edges_;
  std::unique_ptr<Arena> arena_;
  struct SpanIndex;
  std::unique_ptr<SpanIndex> span_index_;
  std::vector<std::uint32_t> span_parent_;
  std::vector<std::uint32_t> op_span_;
  std::vector<std::uint32_t> device_op_span_;
  std::vector<std::uint32_t> tensor_span_;
  std::vector<std::uint32_t> memory_span_;
  std::uint64_t event_count_ = 0;
};

}  // namespace candle_graph
