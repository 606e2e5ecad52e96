#include "trace/chunk_recorder.hpp"

#include <cstring>

namespace candle_graph {

// Every view and pointer of an event is re-pointed below. An event type that grows has a new
// field: copy it here too if it can view the parser's memory, then update its size (LP64).
static_assert(sizeof(void*) != 8 ||
                  (sizeof(MetaEvent) == 184 && sizeof(SpanStartEvent) == 72 &&
                   sizeof(SpanEndEvent) == 24 && sizeof(OpEvent) == 232 &&
                   sizeof(TensorEvent) == 112 && sizeof(MemoryEvent) == 128 &&
                   sizeof(DeviceMemoryEvent) == 56 && sizeof(GradientEvent) == 72 &&
                   sizeof(EdgeEvent) == 40 && sizeof(OpCollective) == 48),
              "an event type changed: check what ChunkRecorder copies");

void* ScratchBlocks::allocate_in_next_block(std::size_t size, std::size_t align) {
  if (size > kBlockSize / 4) {  // a big item gets a block of its own
    oversized_.emplace_back(new std::byte[size + align]);
    std::byte* p = oversized_.back().get();
    return p + (align - reinterpret_cast<std::uintptr_t>(p) % align) % align;
  }
  if (block_ < blocks_.size()) ++block_;  // the current one is full
  if (block_ == blocks_.size()) blocks_.emplace_back(new std::byte[kBlockSize]);
  used_ = 0;
  return allocate(size, align);
}

void ScratchBlocks::reset() noexcept {
  oversized_.clear();
  block_ = 0;
  used_ = 0;
}

void ChunkRecorder::start(const char* begin, std::size_t size, EventCopier& copier) {
  copier_ = &copier;
  begin_ = reinterpret_cast<std::uintptr_t>(begin);
  end_ = begin_ + size;
  order_.clear();
  metas_.clear();
  span_starts_.clear();
  span_ends_.clear();
  ops_.clear();
  tensors_.clear();
  memories_.clear();
  device_memories_.clear();
  gradients_.clear();
  edges_.clear();
  scratch_.reset();
}

std::string_view ChunkRecorder::copy_string(std::string_view s) {
  if (s.empty()) return {};  // an empty view may hold a null pointer, which memcpy must not get
  char* p = static_cast<char*>(scratch_.allocate(s.size(), 1));
  std::memcpy(p, s.data(), s.size());
  return {p, s.size()};
}

std::optional<std::string_view> ChunkRecorder::own(std::optional<std::string_view> s) {
  if (!s) return s;
  return own(*s);
}

template <typename T>
std::span<const T> ChunkRecorder::copy(std::span<const T> items) {
  if (items.empty()) return {};
  T* out = static_cast<T*>(scratch_.allocate(items.size_bytes(), alignof(T)));
  for (std::size_t i = 0; i < items.size(); ++i) new (out + i) T(items[i]);
  return {out, items.size()};
}

MetaEvent ChunkRecorder::owned(const MetaEvent& e) {
  MetaEvent m = e;
  m.schema = own(e.schema);
  TraceRunMeta& r = m.run;
  r.run_id = own(r.run_id);
  r.correlation_id = own(r.correlation_id);
  r.entrypoint = own(r.entrypoint);
  r.timestamp = own(r.timestamp);
  r.device = own(r.device);
  r.candle_version = own(r.candle_version);
  auto tags = static_cast<Tag*>(scratch_.allocate(r.tags.size_bytes() + 1, alignof(Tag)));
  for (std::size_t i = 0; i < r.tags.size(); ++i)
    new (tags + i) Tag{own(r.tags[i].key), own(r.tags[i].value)};
  r.tags = {tags, r.tags.size()};
  r.profiler_steps = copy(r.profiler_steps);
  return m;
}

void ChunkRecorder::add(const TraceEvent& event, std::uint64_t line) {
  std::visit(
      [&](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, MetaEvent>) {
          metas_.push_back(owned(e));
          note(Kind::meta, line);
        } else if constexpr (std::is_same_v<T, SpanStartEvent>) {
          add_span_start(e, line);
        } else if constexpr (std::is_same_v<T, SpanEndEvent>) {
          add_span_end(e, line);
        } else if constexpr (std::is_same_v<T, OpEvent>) {
          add_op(e, line);
        } else if constexpr (std::is_same_v<T, TensorEvent>) {
          add_tensor(e, line);
        } else if constexpr (std::is_same_v<T, MemoryEvent>) {
          add_memory(e, line);
        } else if constexpr (std::is_same_v<T, DeviceMemoryEvent>) {
          add_device_memory(e, line);
        } else if constexpr (std::is_same_v<T, GradientEvent>) {
          add_gradient(e, line);
        } else {
          add_edge(e, line);
        }
      },
      event);
}

void ChunkRecorder::add_span_start(const SpanStartEvent& e, std::uint64_t line) {
  SpanStartEvent& s = span_starts_.emplace_back(e);
  copier_->own_fields(s);
  if (s.parent_id) s.parent_id = own(*s.parent_id);
  note(Kind::span_start, line);
}

void ChunkRecorder::add_span_end(const SpanEndEvent& e, std::uint64_t line) {
  // Its id is only looked up during the replay, never kept: a view of the chunk will do.
  SpanEndEvent& s = span_ends_.emplace_back(e);
  s.id = own(s.id);
  note(Kind::span_end, line);
}

void ChunkRecorder::add_op(const OpEvent& e, std::uint64_t line) {
  OpEvent& o = ops_.emplace_back(e);
  copier_->own_fields(o);
  o.span_id = own(o.span_id);
  note(Kind::op, line);
}

void ChunkRecorder::add_tensor(const TensorEvent& e, std::uint64_t line) {
  TensorEvent& t = tensors_.emplace_back(e);
  copier_->own_fields(t);
  t.span_id = own(t.span_id);
  note(Kind::tensor, line);
}

void ChunkRecorder::add_memory(const MemoryEvent& e, std::uint64_t line) {
  MemoryEvent& m = memories_.emplace_back(e);
  copier_->own_fields(m);
  m.span_id = own(m.span_id);
  note(Kind::memory, line);
}

void ChunkRecorder::add_device_memory(const DeviceMemoryEvent& e, std::uint64_t line) {
  copier_->own_fields(device_memories_.emplace_back(e));
  note(Kind::device_memory, line);
}

void ChunkRecorder::add_gradient(const GradientEvent& e, std::uint64_t line) {
  copier_->own_fields(gradients_.emplace_back(e));
  note(Kind::gradient, line);
}

void ChunkRecorder::add_edge(const EdgeEvent& e, std::uint64_t line) {
  EdgeEvent& d = edges_.emplace_back(e);
  d.from_span = own(d.from_span);
  d.to_span = own(d.to_span);
  note(Kind::edge, line);
}

void ChunkRecorder::replay(EventSink& sink, std::uint64_t first_line) const {
  std::size_t meta = 0, span_start = 0, span_end = 0, op = 0, tensor = 0, memory = 0,
              device_memory = 0, gradient = 0, edge = 0;
  for (const Entry& entry : order_) {
    const std::uint64_t line = first_line - 1 + entry.line;
    switch (static_cast<Kind>(entry.kind)) {
      case Kind::meta:
        sink.add(metas_[meta++], line);
        break;
      case Kind::span_start:
        sink.add_span_start(span_starts_[span_start++], line);
        break;
      case Kind::span_end:
        sink.add_span_end(span_ends_[span_end++], line);
        break;
      case Kind::op:
        sink.add_op(ops_[op++], line);
        break;
      case Kind::tensor:
        sink.add_tensor(tensors_[tensor++], line);
        break;
      case Kind::memory:
        sink.add_memory(memories_[memory++], line);
        break;
      case Kind::device_memory:
        sink.add_device_memory(device_memories_[device_memory++], line);
        break;
      case Kind::gradient:
        sink.add_gradient(gradients_[gradient++], line);
        break;
      case Kind::edge:
        sink.add_edge(edges_[edge++], line);
        break;
    }
  }
}

}  // namespace candle_graph
