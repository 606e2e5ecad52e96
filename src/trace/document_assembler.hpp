// trace6.md §5.2 TraceDocument::from_events as an incremental builder: the streaming reader feeds
// it one event at a time (views into a transient line buffer), it copies what it keeps into the
// document's arena and enforces the stream rules (meta first and once, span ids unique, every
// span_end matches one earlier span_start, no second span_end).
#pragma once

#include <array>
#include <string>

#include "candle_graph/trace.hpp"
#include "trace/event_copier.hpp"
#include "trace/event_sink.hpp"

namespace candle_graph {

class PagePrefaulter;

class DocumentAssembler {
 public:
  explicit DocumentAssembler(std::string source);

  // Where a reader puts the events it parsed: each is checked against the stream rules and its
  // strings and arrays are copied into the document; `line` (1-based, or the event number for
  // in-memory events) is what errors name.
  EventSink& events() noexcept { return copying_; }
  void add(const TraceEvent& event, std::uint64_t line) { copying_.add(event, line); }

  // Reserves room for about `scale` times the events seen so far (of each kind), `scale` being
  // the file size over the bytes read so far. Growing a vector by doubling briefly holds the old
  // and the new array, which put the reader's peak RSS at 1.2× the trace; reserved but unused
  // capacity is never touched, so an overestimate costs address space, not memory.
  // At most `byte_budget` bytes of address space are reserved in total.
  void reserve_like_so_far(double scale, double byte_budget);
  // Reserves room for these many events of each kind (and their span links), for an importer
  // that counted them before placing them.
  void reserve(std::size_t spans, std::size_t ops, std::size_t device_ops, std::size_t memory);

  // Asks `prefaulter` to map, ahead of time, the next stretch of reserved capacity of every array
  // that grew since the last call, so that the thread filling them takes fewer page faults.
  void prefault_ahead(PagePrefaulter& prefaulter);

  // The same events, their strings and arrays already copied into an arena that outlives the
  // document (a worker's, absorbed with absorb() before finish()): placed without copying them
  // again. Span references need only live until the event is placed (ChunkRecorder leaves them
  // in the chunk's text): each becomes its span's own id, or a copy if the span is not known yet.
  EventSink& owned_events() noexcept { return owned_; }
  // Makes `arena`'s copies the document's own.
  void absorb(Arena&& arena) { doc_.arena_->absorb(std::move(arena)); }

  // Final checks (a meta was seen) and derived links. The assembler is spent afterwards.
  TraceDocument finish();

  const std::string& source() const noexcept { return source_; }

 private:
  // Whether an event's strings and arrays still need copying into the document's arena.
  enum class Fields { to_copy, owned };
  // events() and owned_events(): every event to place(), but a meta (copied: one per trace, its
  // tags sorted by add_meta) and a span_end (nothing of it is kept).
  template <Fields F>
  class Placing final : public EventSink {
   public:
    explicit Placing(DocumentAssembler& a) : a_(a) {}
    void add(const TraceEvent& event, std::uint64_t line) override {
      std::visit([&](const auto& e) { place(e, line); }, event);
    }
    void add_span_start(const SpanStartEvent& e, std::uint64_t line) override { place(e, line); }
    void add_span_end(const SpanEndEvent& e, std::uint64_t line) override { place(e, line); }
    void add_op(const OpEvent& e, std::uint64_t line) override { place(e, line); }
    void add_tensor(const TensorEvent& e, std::uint64_t line) override { place(e, line); }
    void add_memory(const MemoryEvent& e, std::uint64_t line) override { place(e, line); }
    void add_device_memory(const DeviceMemoryEvent& e, std::uint64_t line) override {
      place(e, line);
    }
    void add_gradient(const GradientEvent& e, std::uint64_t line) override { place(e, line); }
    void add_edge(const EdgeEvent& e, std::uint64_t line) override { place(e, line); }

   private:
    void place(const MetaEvent& e, std::uint64_t line) { a_.add_meta(e, line); }
    void place(const SpanEndEvent& e, std::uint64_t line) { a_.add_span_end(e, line); }
    template <typename Event>
    void place(const Event& e, std::uint64_t line) {
      a_.place(e, line, F);
    }
    DocumentAssembler& a_;
  };

  void add_meta(const MetaEvent& e, std::uint64_t line);
  void add_span_end(const SpanEndEvent& e, std::uint64_t line);
  void place(const SpanStartEvent& e, std::uint64_t line, Fields fields);
  void place(const OpEvent& e, std::uint64_t line, Fields fields);
  void place(const TensorEvent& e, std::uint64_t line, Fields fields);
  void place(const MemoryEvent& e, std::uint64_t line, Fields fields);
  void place(const DeviceMemoryEvent& e, std::uint64_t line, Fields fields);
  void place(const GradientEvent& e, std::uint64_t line, Fields fields);
  void place(const EdgeEvent& e, std::uint64_t line, Fields fields);

  [[noreturn]] void fail(std::uint64_t line, std::string message) const;
  std::string_view copy(std::string_view s) { return doc_.arena_->copy(s); }
  // A span reference: the span's own id view when it is known, else a copy.
  std::string_view span_ref(std::string_view id, std::uint32_t& index);

  std::string source_;
  TraceDocument doc_;
  EventCopier copier_;
  Placing<Fields::to_copy> copying_{*this};
  Placing<Fields::owned> owned_{*this};
  bool meta_seen_ = false;
  std::uint64_t index_ = 0;  // 0-based event index (non-empty lines)
  // Consecutive events usually name the same span: a one-entry cache of the last span_ref hit.
  std::string_view last_span_id_;
  std::uint32_t last_span_index_ = kNoIndex;
  // Calls `f` on each of the document's per-event arrays, the ones the reader reserves ahead.
  template <typename F>
  void for_each_array(F&& f) {
    f(doc_.spans_), f(doc_.ops_), f(doc_.tensors_), f(doc_.memory_), f(doc_.device_memory_);
    f(doc_.gradients_), f(doc_.edges_), f(doc_.op_span_), f(doc_.tensor_span_);
    f(doc_.memory_span_), f(doc_.device_ops_), f(doc_.device_op_span_);
  }
  static constexpr std::size_t kArrays = 12;  // for_each_array's calls of f
  // Per array, in for_each_array's order: where it was, its size at the last prefault_ahead and
  // the end of the stretches queued so far (in elements).
  struct Prefaulted {
    const void* data = nullptr;
    std::size_t size = 0;
    std::size_t queued_to = 0;
  };
  std::array<Prefaulted, kArrays> prefaulted_{};
};

}  // namespace candle_graph
