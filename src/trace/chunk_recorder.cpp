#include "trace/chunk_recorder.hpp"

#include <cstring>
#include <functional>

namespace candle_graph {

void* ScratchBlocks::allocate(std::size_t size, std::size_t align) {
  if (size > kBlockSize / 4) {  // a big item gets a block of its own
    oversized_.emplace_back(new std::byte[size + align]);
    std::byte* p = oversized_.back().get();
    return p + (align - reinterpret_cast<std::uintptr_t>(p) % align) % align;
  }
  for (;;) {
    if (block_ == blocks_.size()) {
      blocks_.emplace_back(new std::byte[kBlockSize]);
      used_ = 0;
    }
    std::byte* base = blocks_[block_].get();
    const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(base) + used_;
    const std::size_t pad = (align - at % align) % align;
    if (used_ + pad + size <= kBlockSize) {
      std::byte* p = base + used_ + pad;
      used_ += pad + size;
      return p;
    }
    ++block_;
    used_ = 0;
  }
}

void ScratchBlocks::reset() noexcept {
  oversized_.clear();
  block_ = 0;
  used_ = 0;
}

void ChunkRecorder::start(const char* begin, std::size_t size) {
  begin_ = begin;
  end_ = begin + size;
  events_.clear();
  scratch_.reset();
}

std::string_view ChunkRecorder::own(std::string_view s) {
  // std::less orders pointers into unrelated objects too.
  if (s.empty() || (!std::less<const char*>()(s.data(), begin_) &&
                    !std::less<const char*>()(end_, s.data() + s.size())))
    return s;
  char* p = static_cast<char*>(scratch_.allocate(s.size(), 1));
  std::memcpy(p, s.data(), s.size());
  return {p, s.size()};
}

std::optional<std::string_view> ChunkRecorder::own(std::optional<std::string_view> s) {
  if (!s) return s;
  return own(*s);
}

std::span<const std::string_view> ChunkRecorder::own(std::span<const std::string_view> ids) {
  if (ids.empty()) return {};
  auto* out = static_cast<std::string_view*>(
      scratch_.allocate(ids.size_bytes(), alignof(std::string_view)));
  for (std::size_t i = 0; i < ids.size(); ++i) new (out + i) std::string_view(own(ids[i]));
  return {out, ids.size()};
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
        if constexpr (std::is_same_v<T, MetaEvent>)
          events_.push_back({owned(e), line});
        else if constexpr (std::is_same_v<T, SpanStartEvent>)
          add_span_start(e, line);
        else if constexpr (std::is_same_v<T, SpanEndEvent>)
          add_span_end(e, line);
        else if constexpr (std::is_same_v<T, OpEvent>)
          add_op(e, line);
        else if constexpr (std::is_same_v<T, TensorEvent>)
          add_tensor(e, line);
        else if constexpr (std::is_same_v<T, MemoryEvent>)
          add_memory(e, line);
        else if constexpr (std::is_same_v<T, DeviceMemoryEvent>)
          add_device_memory(e, line);
        else if constexpr (std::is_same_v<T, GradientEvent>)
          add_gradient(e, line);
        else
          add_edge(e, line);
      },
      event);
}

void ChunkRecorder::add_span_start(const SpanStartEvent& e, std::uint64_t line) {
  SpanStartEvent s = e;
  s.id = own(e.id);
  s.parent_id = own(e.parent_id);
  s.name = own(e.name);
  events_.push_back({s, line});
}

void ChunkRecorder::add_span_end(const SpanEndEvent& e, std::uint64_t line) {
  SpanEndEvent s = e;
  s.id = own(e.id);
  events_.push_back({s, line});
}

void ChunkRecorder::add_op(const OpEvent& e, std::uint64_t line) {
  OpEvent o = e;
  o.span_id = own(e.span_id);
  o.op_name = own(e.op_name);
  o.inputs = own(e.inputs);
  o.output = own(e.output);
  o.shape = copy(e.shape);
  o.dtype = own(e.dtype);
  o.device = own(e.device);
  events_.push_back({o, line});
}

void ChunkRecorder::add_tensor(const TensorEvent& e, std::uint64_t line) {
  TensorEvent t = e;
  t.span_id = own(e.span_id);
  t.tensor_id = own(e.tensor_id);
  t.shape = copy(e.shape);
  t.dtype = own(e.dtype);
  t.device = own(e.device);
  events_.push_back({t, line});
}

void ChunkRecorder::add_memory(const MemoryEvent& e, std::uint64_t line) {
  MemoryEvent m = e;
  m.tensor_id = own(e.tensor_id);
  m.span_id = own(e.span_id);
  m.op_name = own(e.op_name);
  m.device = own(e.device);
  m.shape = copy(e.shape);
  m.dtype = own(e.dtype);
  events_.push_back({m, line});
}

void ChunkRecorder::add_device_memory(const DeviceMemoryEvent& e, std::uint64_t line) {
  DeviceMemoryEvent d = e;
  d.device = own(e.device);
  events_.push_back({d, line});
}

void ChunkRecorder::add_gradient(const GradientEvent& e, std::uint64_t line) {
  GradientEvent g = e;
  g.event_id = own(e.event_id);
  g.root = own(e.root);
  g.key = own(e.key);
  events_.push_back({g, line});
}

void ChunkRecorder::add_edge(const EdgeEvent& e, std::uint64_t line) {
  EdgeEvent d = e;
  d.from_span = own(e.from_span);
  d.to_span = own(e.to_span);
  events_.push_back({d, line});
}

void ChunkRecorder::replay(EventSink& sink, std::uint64_t first_line) const {
  for (const Recorded& r : events_) sink.add(r.event, first_line - 1 + r.line);
}

}  // namespace candle_graph
