// The events of one chunk of a trace, parsed by one of the reading threads and kept until the
// chunk's turn comes, when the same thread replays them into the document assembler in file
// order. Their strings and arrays are copied as they are recorded, by the thread's EventCopier
// into its arena, which the document absorbs at the end: placing them then copies nothing
// (DocumentAssembler::owned_events), and the turns, which run one at a time, stay short. A meta
// event (one per trace) and span references are the exceptions: the recorder keeps them as views
// of the chunk where they are, else in scratch blocks reused from one chunk to the next, and the
// assembler resolves a reference to its span's own id (copying only the rare reference to a span
// not started yet), so the id that names a span is not copied for every event.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "trace/event_copier.hpp"
#include "trace/event_sink.hpp"

namespace candle_graph {

// A bump allocator whose blocks survive reset(): a recorder's copies cost no malloc once warm.
class ScratchBlocks {
 public:
  void* allocate(std::size_t size, std::size_t align) {
    if (block_ < blocks_.size()) {  // the common case inline: room in the current block
      const std::size_t pad = (align - (base() + used_) % align) % align;
      if (used_ + pad + size <= kBlockSize) {
        std::byte* p = blocks_[block_].get() + used_ + pad;
        used_ += pad + size;
        return p;
      }
    }
    return allocate_in_next_block(size, align);
  }
  void reset() noexcept;

 private:
  std::uintptr_t base() const noexcept {
    return reinterpret_cast<std::uintptr_t>(blocks_[block_].get());
  }
  void* allocate_in_next_block(std::size_t size, std::size_t align);

  static constexpr std::size_t kBlockSize = std::size_t{256} << 10;
  std::vector<std::unique_ptr<std::byte[]>> blocks_;     // kBlockSize each
  std::vector<std::unique_ptr<std::byte[]>> oversized_;  // one item each, freed on reset
  std::size_t block_ = 0;                                // the block being filled
  std::size_t used_ = 0;                                 // bytes used in it
};

class ChunkRecorder final : public EventSink {
 public:
  // Starts recording the events of the chunk `[begin, begin + size)`, copying them with
  // `copier`.
  void start(const char* begin, std::size_t size, EventCopier& copier);

  void add(const TraceEvent& event, std::uint64_t line) override;
  void add_span_start(const SpanStartEvent& e, std::uint64_t line) override;
  void add_span_end(const SpanEndEvent& e, std::uint64_t line) override;
  void add_op(const OpEvent& e, std::uint64_t line) override;
  void add_tensor(const TensorEvent& e, std::uint64_t line) override;
  void add_memory(const MemoryEvent& e, std::uint64_t line) override;
  void add_device_memory(const DeviceMemoryEvent& e, std::uint64_t line) override;
  void add_gradient(const GradientEvent& e, std::uint64_t line) override;
  void add_edge(const EdgeEvent& e, std::uint64_t line) override;

  // Hands every recorded event to `sink` (the assembler's owned_events()) in order, its line
  // moved by `first_line - 1`.
  void replay(EventSink& sink, std::uint64_t first_line) const;

 private:
  // The events by kind (one copy each, no variant), and their order: (kind, line) per event.
  enum class Kind : std::uint8_t {
    meta,
    span_start,
    span_end,
    op,
    tensor,
    memory,
    device_memory,
    gradient,
    edge
  };
  struct Entry {
    std::uint64_t line : 56;
    std::uint64_t kind : 8;
  };
  void note(Kind kind, std::uint64_t line) {
    order_.push_back({line, static_cast<std::uint64_t>(kind)});
  }
  // For the meta event, span references and a span_end's id, which the replay reads but the
  // document keeps no copy of (a reference becomes its span's own id): a view into the chunk
  // stays (the chunk outlives the replay); anything else is copied.
  std::string_view own(std::string_view s) {
    const auto at = reinterpret_cast<std::uintptr_t>(s.data());
    if (s.empty() || (at >= begin_ && at + s.size() <= end_)) return s;
    return copy_string(s);
  }
  std::string_view copy_string(std::string_view s);
  std::optional<std::string_view> own(std::optional<std::string_view> s);
  template <typename T>
  std::span<const T> copy(std::span<const T> items);
  MetaEvent owned(const MetaEvent& e);

  EventCopier* copier_ = nullptr;
  std::uintptr_t begin_ = 0;  // the chunk's bytes, as addresses
  std::uintptr_t end_ = 0;
  std::vector<Entry> order_;
  std::vector<MetaEvent> metas_;
  std::vector<SpanStartEvent> span_starts_;
  std::vector<SpanEndEvent> span_ends_;
  std::vector<OpEvent> ops_;
  std::vector<TensorEvent> tensors_;
  std::vector<MemoryEvent> memories_;
  std::vector<DeviceMemoryEvent> device_memories_;
  std::vector<GradientEvent> gradients_;
  std::vector<EdgeEvent> edges_;
  ScratchBlocks scratch_;
};

}  // namespace candle_graph
