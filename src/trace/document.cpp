// TraceDocument storage and trace6.md §5.2 assembly/validation.
#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "output/json_text.hpp"
#include "trace/document_assembler.hpp"
#include "trace/huge_pages.hpp"
#include "trace/page_prefaulter.hpp"

namespace candle_graph {

// Span id -> index of its first span: open addressing (linear probing) over 8-byte slots that
// keep each id's hash next to the span index, so a probe only reads the span (a likely cache
// miss on a large trace) when the hashes agree. A node-based map cost a cache miss per node and
// ~56 bytes per span; its lookups were ~9% of read's CPU time on a 295 MB trace.
// The ids live in the spans vector, which is passed in: the document (and its vectors) move.
struct TraceDocument::SpanIndex {
  struct Slot {
    std::uint32_t span = kNoIndex;
    std::uint32_t hash = 0;
  };
  std::vector<Slot> slots;
  std::size_t mask = 0;
  std::size_t size = 0;

  static std::uint32_t hash_of(std::string_view id) noexcept {
    const std::uint64_t h = ShortStringHash{}(id);
    return static_cast<std::uint32_t>(h ^ (h >> 32));
  }
  std::uint32_t find(std::string_view id, const std::vector<SpanRecord>& spans) const noexcept {
    if (size == 0) return kNoIndex;
    const std::uint32_t h = hash_of(id);
    for (std::size_t i = h & mask; slots[i].span != kNoIndex; i = (i + 1) & mask)
      if (slots[i].hash == h && spans[slots[i].span].id == id) return slots[i].span;
    return kNoIndex;
  }
  // Adds spans[span] unless its id is already present (the first span of an id wins).
  void insert(std::uint32_t span, const std::vector<SpanRecord>& spans) {
    if ((size + 1) * 2 > slots.size()) rehash(std::max<std::size_t>(64, slots.size() * 2));
    const std::string_view id = spans[span].id;
    const std::uint32_t h = hash_of(id);
    std::size_t i = h & mask;
    for (; slots[i].span != kNoIndex; i = (i + 1) & mask)
      if (slots[i].hash == h && spans[slots[i].span].id == id) return;
    slots[i] = Slot{span, h};
    ++size;
  }
  // Room for `n` ids without rehashing (load factor at most 1/2).
  void reserve(std::size_t n) {
    std::size_t capacity = 64;
    while (capacity < 2 * n) capacity *= 2;
    if (capacity > slots.size()) rehash(capacity);
  }
  void clear() {
    slots.clear();
    mask = 0;
    size = 0;
  }
  void rehash(std::size_t capacity) {
    std::vector<Slot> old(capacity);
    old.swap(slots);
    mask = capacity - 1;
    for (const Slot& s : old) {
      if (s.span == kNoIndex) continue;
      std::size_t i = s.hash & mask;
      while (slots[i].span != kNoIndex) i = (i + 1) & mask;
      slots[i] = s;
    }
  }
};

TraceDocument::TraceDocument()
    : arena_(std::make_unique<Arena>()), span_index_(std::make_unique<SpanIndex>()) {}
TraceDocument::TraceDocument(TraceDocument&&) noexcept = default;
TraceDocument& TraceDocument::operator=(TraceDocument&&) noexcept = default;
TraceDocument::~TraceDocument() = default;

std::uint32_t TraceDocument::find_span(std::string_view id) const {
  return span_index_->find(id, spans_);
}

std::size_t TraceDocument::distinct_span_ids() const noexcept {
  return span_index_->size;
}

bool TraceDocument::operator==(const TraceDocument& o) const {
  return schema_ == o.schema_ && run_ == o.run_ && spans_ == o.spans_ && ops_ == o.ops_ &&
         device_ops_ == o.device_ops_ && tensors_ == o.tensors_ && memory_ == o.memory_ &&
         device_memory_ == o.device_memory_ && gradients_ == o.gradients_ && edges_ == o.edges_;
}

void TraceDocument::reindex() {
  span_index_->clear();
  span_index_->reserve(spans_.size());
  for (std::size_t i = 0; i < spans_.size(); ++i)
    span_index_->insert(static_cast<std::uint32_t>(i), spans_);
  span_parent_.resize(spans_.size());
  for (std::size_t i = 0; i < spans_.size(); ++i)
    span_parent_[i] = spans_[i].parent_id ? find_span(*spans_[i].parent_id) : kNoIndex;
  auto link = [&](std::vector<std::uint32_t>& links, const auto& events) {
    links.resize(events.size());
    for (std::size_t i = 0; i < events.size(); ++i) links[i] = find_span(events[i].span_id);
  };
  link(op_span_, ops_);
  link(device_op_span_, device_ops_);
  link(tensor_span_, tensors_);
  link(memory_span_, memory_);
}

void TraceDocument::check_indexed() const {
  if (span_parent_.size() != spans_.size() || op_span_.size() != ops_.size() ||
      device_op_span_.size() != device_ops_.size() || tensor_span_.size() != tensors_.size() ||
      memory_span_.size() != memory_.size())
    throw Error(
        "trace document indexes are stale: call DocumentEditor::reindex() after editing it");
}

// ---- DocumentAssembler ----------------------------------------------------------------------

DocumentAssembler::DocumentAssembler(std::string source)
    : source_(std::move(source)), copier_(*doc_.arena_) {}

void DocumentAssembler::fail(std::uint64_t line, std::string message) const {
  throw Error(source_, line, std::move(message));
}

std::string_view DocumentAssembler::span_ref(std::string_view id, std::uint32_t& index) {
  // Spans are never removed or renamed, so a cached hit stays valid.
  if (last_span_index_ != kNoIndex && id == last_span_id_) {
    index = last_span_index_;
    return last_span_id_;
  }
  const std::uint32_t found = doc_.span_index_->find(id, doc_.spans_);
  if (found != kNoIndex) {
    index = found;
    last_span_index_ = found;
    last_span_id_ = doc_.spans_[found].id;
    return last_span_id_;
  }
  index = kNoIndex;  // resolved in finish() if the span starts later
  // Rare (a span named before it starts), and `id` may view a chunk that is read into again.
  return copier_.intern(id);
}

void DocumentAssembler::reserve_like_so_far(double scale, double byte_budget) {
  // The kind mix drifts along a trace (the first 4 MiB of a synth trace hold 13% fewer memory
  // events than the whole, and no gradients): reserve 1.5× the extrapolation of every kind, then,
  // as far as `byte_budget` of address space allows, at least a quarter of all extrapolated
  // events for every kind. Untouched capacity costs no memory; the budget keeps a trace of tiny
  // lines from asking for terabytes.
  const double all = static_cast<double>(index_) * scale;
  auto base = [&](const auto& v) { return static_cast<double>(v.size()) * scale * 1.5; };
  auto extra = [&](const auto& v) { return std::max(0.0, all / 4 - base(v)); };
  double base_bytes = 0, extra_bytes = 0;
  auto add_up = [&](const auto& v) {
    base_bytes += base(v) * sizeof(v[0]);
    extra_bytes += extra(v) * sizeof(v[0]);
  };
  for_each_array(add_up);
  const double room = byte_budget - base_bytes;
  const double floor_share = extra_bytes <= room ? 1.0 : std::max(0.0, room / extra_bytes);
  auto grow = [&](auto& v) {
    reserve_in_huge_pages(v, static_cast<std::size_t>(base(v) + extra(v) * floor_share) + 16);
  };
  for_each_array(grow);
  // Buckets are touched when allocated: size them for the plain extrapolation only.
  doc_.span_index_->reserve(
      static_cast<std::size_t>(std::min(static_cast<double>(doc_.spans_.size()) * scale * 1.05,
                                        static_cast<double>(doc_.spans_.capacity()))));
}

void DocumentAssembler::reserve(std::size_t spans, std::size_t ops, std::size_t device_ops,
                                std::size_t memory) {
  reserve_in_huge_pages(doc_.spans_, spans);
  reserve_in_huge_pages(doc_.ops_, ops);
  reserve_in_huge_pages(doc_.op_span_, ops);
  reserve_in_huge_pages(doc_.device_ops_, device_ops);
  reserve_in_huge_pages(doc_.device_op_span_, device_ops);
  reserve_in_huge_pages(doc_.memory_, memory);
  reserve_in_huge_pages(doc_.memory_span_, memory);
  doc_.span_index_->reserve(spans);
}

void DocumentAssembler::prefault_ahead(PagePrefaulter& prefaulter) {
  // Once an array's elements come within two calls' growth (at least 256 KiB) of the stretch
  // already queued, the next one is queued: from there to four calls' growth ahead, so that each
  // page is asked for once and the calls are few.
  constexpr std::size_t kMinAheadBytes = std::size_t{256} << 10;
  std::size_t k = 0;
  auto ahead = [&](const auto& v) {
    Prefaulted& p = prefaulted_.at(k++);  // at(): kArrays must count every array
    if (p.data != v.data()) p = Prefaulted{v.data(), v.size(), v.size()};  // moved: start over
    const std::size_t grown = v.size() - std::min(v.size(), p.size);
    p.size = v.size();
    const std::size_t step = std::max(2 * grown, kMinAheadBytes / sizeof(v[0]) + 1);
    if (grown == 0 || p.queued_to >= std::min(v.capacity(), v.size() + step)) return;
    const std::size_t from = std::max(v.size(), p.queued_to);
    p.queued_to = std::min(v.capacity(), v.size() + 2 * step);
    prefaulter.populate(v.data() + from, v.data() + p.queued_to);
  };
  for_each_array(ahead);
}

void DocumentAssembler::add_meta(const MetaEvent& e, std::uint64_t line) {
  const std::uint64_t i = index_++;
  if (meta_seen_)
    fail(line, "duplicate meta event at index " + std::to_string(i) +
                   "; only one meta record is allowed");
  if (i != 0)
    fail(line, "meta event must be the first non-empty trace record, found at index " +
                   std::to_string(i));
  if (e.schema != kTraceSchema) {
    std::string quoted;
    output::append_json_string(quoted, e.schema);
    fail(line,
         "unsupported trace schema " + quoted + "; expected \"" + std::string(kTraceSchema) + "\"");
  }
  meta_seen_ = true;
  doc_.schema_ = kTraceSchema;
  TraceRunMeta run = e.run;
  run.run_id = copy(e.run.run_id);
  run.correlation_id = copy(e.run.correlation_id);
  run.entrypoint = copy(e.run.entrypoint);
  run.timestamp = copy(e.run.timestamp);
  run.device = copier_.intern(e.run.device);
  if (e.run.candle_version) run.candle_version = copy(*e.run.candle_version);
  run.profiler_steps = doc_.arena_->copy(e.run.profiler_steps);
  // Tags are a map on the wire: sorted by key, the last value of a repeated key wins.
  std::vector<Tag> tags;
  for (const Tag& t : e.run.tags) {
    auto it = std::find_if(tags.begin(), tags.end(), [&](const Tag& x) { return x.key == t.key; });
    if (it != tags.end())
      it->value = t.value;
    else
      tags.push_back(t);
  }
  std::sort(tags.begin(), tags.end(), [](const Tag& a, const Tag& b) { return a.key < b.key; });
  for (Tag& t : tags) t = Tag{copy(t.key), copy(t.value)};
  run.tags = doc_.arena_->copy(std::span<const Tag>(tags));
  doc_.run_ = run;
}

void DocumentAssembler::place(const SpanStartEvent& e, std::uint64_t line, Fields fields) {
  const std::uint64_t i = index_++;
  if (doc_.span_index_->find(e.id, doc_.spans_) != kNoIndex)
    fail(line, "duplicate span_start id `" + std::string(e.id) + "` at index " + std::to_string(i));
  SpanStartEvent owned = e;
  if (fields == Fields::to_copy) copier_.own_fields(owned);
  SpanRecord s;
  s.id = owned.id;
  if (e.parent_id) {
    std::uint32_t unused;
    s.parent_id = span_ref(*e.parent_id, unused);
  }
  s.name = owned.name;
  s.kind = e.span_kind;
  s.measured = e.measured;
  s.start_ns = e.start_ns;
  s.step = e.step;
  doc_.spans_.push_back(s);
  doc_.span_index_->insert(static_cast<std::uint32_t>(doc_.spans_.size() - 1), doc_.spans_);
}

void DocumentAssembler::add_span_end(const SpanEndEvent& e, std::uint64_t line) {
  const std::uint64_t i = index_++;
  const std::uint32_t found = doc_.span_index_->find(e.id, doc_.spans_);
  if (found == kNoIndex)
    fail(line,
         "span_end for unknown span `" + std::string(e.id) + "` at index " + std::to_string(i));
  SpanRecord& s = doc_.spans_[found];
  if (s.closed)
    fail(line, "duplicate span_end for `" + std::string(e.id) + "` at index " + std::to_string(i));
  s.closed = true;
  s.duration_ns = e.duration_ns;
}

void DocumentAssembler::place(const OpEvent& e, std::uint64_t line, Fields fields) {
  ++index_;
  // trace6.md §4.5.1: a host op's inclusive time holds its exclusive time; device work takes no
  // host time. Either broken would make self and total times that cannot be true.
  if (e.total_ns && !is_device_kind(e.op_kind) && *e.total_ns < e.duration_ns)
    fail(line, "op `" + std::string(e.op_name) + "` has total_ns " + std::to_string(*e.total_ns) +
                   " below its duration_ns " + std::to_string(e.duration_ns) +
                   " (total_ns is the inclusive time, duration_ns the exclusive part of it)");
  if (is_device_kind(e.op_kind) && e.duration_ns != 0)
    fail(line, "device op `" + std::string(e.op_name) + "` (op_kind " +
                   std::string(to_string(e.op_kind)) + ") has duration_ns " +
                   std::to_string(e.duration_ns) +
                   ": device work takes no host time, its device time is total_ns");
  // Copied once, into its place, then completed there.
  const bool device = is_device_kind(e.op_kind);
  OpEvent& o = (device ? doc_.device_ops_ : doc_.ops_).emplace_back(e);
  if (fields == Fields::to_copy) copier_.own_fields(o);
  std::uint32_t span_index;
  o.span_id = span_ref(e.span_id, span_index);
  o.storage_bytes = resolve_storage_bytes(e.storage_bytes, e.shape, e.dtype);
  (device ? doc_.device_op_span_ : doc_.op_span_).push_back(span_index);
}

void DocumentAssembler::place(const TensorEvent& e, std::uint64_t /*line*/, Fields fields) {
  ++index_;
  TensorEvent& t = doc_.tensors_.emplace_back(e);
  if (fields == Fields::to_copy) copier_.own_fields(t);
  std::uint32_t span_index;
  t.span_id = span_ref(e.span_id, span_index);
  t.storage_bytes = resolve_storage_bytes(e.storage_bytes, e.shape, e.dtype);
  doc_.tensor_span_.push_back(span_index);
}

void DocumentAssembler::place(const MemoryEvent& e, std::uint64_t /*line*/, Fields fields) {
  ++index_;
  MemoryEvent& m = doc_.memory_.emplace_back(e);
  if (fields == Fields::to_copy) copier_.own_fields(m);
  std::uint32_t span_index;
  m.span_id = span_ref(e.span_id, span_index);
  doc_.memory_span_.push_back(span_index);
}

void DocumentAssembler::place(const DeviceMemoryEvent& e, std::uint64_t /*line*/, Fields fields) {
  ++index_;
  DeviceMemoryEvent d = e;
  if (fields == Fields::to_copy) copier_.own_fields(d);
  doc_.device_memory_.push_back(d);
}

void DocumentAssembler::place(const GradientEvent& e, std::uint64_t /*line*/, Fields fields) {
  ++index_;
  GradientEvent g = e;
  if (fields == Fields::to_copy) copier_.own_fields(g);
  doc_.gradients_.push_back(g);
}

void DocumentAssembler::place(const EdgeEvent& e, std::uint64_t /*line*/,
                              Fields /*fields: an edge has nothing but span references*/) {
  ++index_;
  std::uint32_t unused;
  EdgeEvent x = e;
  x.from_span = span_ref(e.from_span, unused);
  x.to_span = span_ref(e.to_span, unused);
  doc_.edges_.push_back(x);
}

TraceDocument DocumentAssembler::finish() {
  if (!meta_seen_) fail(0, "trace stream is missing a meta event with run metadata");
  doc_.event_count_ = index_;
  // The arrays keep their capacity, but the pages past their elements (mapped ahead by a
  // prefault, or the rest of a huge page) go back: they are the document's, for as long as the
  // command runs, and no event will ever be placed there.
  for_each_array([](auto& v) { release_unused_capacity(v); });
  // Resolve links that pointed forward (or nowhere) while streaming.
  auto resolve = [&](std::vector<std::uint32_t>& links, auto span_id_of, const auto& events) {
    for (std::size_t i = 0; i < links.size(); ++i)
      if (links[i] == kNoIndex) links[i] = doc_.find_span(span_id_of(events[i]));
  };
  resolve(
      doc_.op_span_, [](const OpEvent& o) { return o.span_id; }, doc_.ops_);
  resolve(
      doc_.device_op_span_, [](const OpEvent& o) { return o.span_id; }, doc_.device_ops_);
  resolve(
      doc_.tensor_span_, [](const TensorEvent& t) { return t.span_id; }, doc_.tensors_);
  resolve(
      doc_.memory_span_, [](const MemoryEvent& m) { return m.span_id; }, doc_.memory_);
  doc_.span_parent_.resize(doc_.spans_.size());
  for (std::size_t i = 0; i < doc_.spans_.size(); ++i) {
    const auto& p = doc_.spans_[i].parent_id;
    doc_.span_parent_[i] = p ? doc_.find_span(*p) : kNoIndex;
  }
  return std::move(doc_);
}

TraceDocument TraceDocument::from_events(std::span<const TraceEvent> events,
                                         std::string_view source) {
  DocumentAssembler assembler{std::string(source)};
  std::uint64_t n = 0;
  for (const TraceEvent& e : events) assembler.add(e, ++n);
  return assembler.finish();
}

}  // namespace candle_graph
