// Equality of the events that hold arrays (by content, not by where their views point) and the
// wire name of each event kind.
#include <algorithm>

#include "candle_graph/trace_events.hpp"
#include "format/trace6.hpp"

namespace candle_graph {

namespace {
template <typename T>
bool same(std::span<const T> a, std::span<const T> b) {
  return std::ranges::equal(a, b);
}
}  // namespace

std::optional<std::string_view> TraceRunMeta::find_tag(std::string_view key) const {
  // Linear: a run has a few dozen tags, and a run built by hand may not keep them sorted.
  const auto it = std::ranges::find(tags, key, &Tag::key);
  if (it == tags.end()) return std::nullopt;
  return it->value;
}

bool TraceRunMeta::operator==(const TraceRunMeta& o) const {
  return run_id == o.run_id && correlation_id == o.correlation_id && entrypoint == o.entrypoint &&
         phase == o.phase && timestamp == o.timestamp && capture_step == o.capture_step &&
         warmup_steps == o.warmup_steps && device == o.device &&
         measured_region_device_synchronized == o.measured_region_device_synchronized &&
         timing_mode == o.timing_mode && same(tags, o.tags) && candle_version == o.candle_version &&
         same(profiler_steps, o.profiler_steps);
}

bool OpEvent::operator==(const OpEvent& o) const {
  return span_id == o.span_id && op_name == o.op_name && same(inputs, o.inputs) &&
         output == o.output && same(shape, o.shape) && dtype == o.dtype && device == o.device &&
         duration_ns == o.duration_ns && timestamp_ns == o.timestamp_ns &&
         storage_bytes == o.storage_bytes && input_storage_bytes == o.input_storage_bytes &&
         op_kind == o.op_kind && total_ns == o.total_ns && lane == o.lane &&
         correlation == o.correlation &&
         (collective == o.collective ||
          (collective && o.collective && *collective == *o.collective));
}

bool TensorEvent::operator==(const TensorEvent& o) const {
  return span_id == o.span_id && tensor_id == o.tensor_id && same(shape, o.shape) &&
         dtype == o.dtype && device == o.device && requires_grad == o.requires_grad &&
         storage_bytes == o.storage_bytes && category == o.category;
}

bool MemoryEvent::operator==(const MemoryEvent& o) const {
  return timestamp_ns == o.timestamp_ns && tensor_id == o.tensor_id && span_id == o.span_id &&
         op_name == o.op_name && device == o.device && bytes == o.bytes && action == o.action &&
         same(shape, o.shape) && dtype == o.dtype && category == o.category;
}

std::string_view event_kind_name(const TraceEvent& event) noexcept {
  static_assert(std::variant_size_v<TraceEvent> == format::trace6::kEventKinds.size());
  return format::trace6::kEventKinds[event.index()];
}

}  // namespace candle_graph
