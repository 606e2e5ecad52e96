// Op and memory events of a capture (trace6.md §4.5, §4.7).
#include "event_writer.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

namespace candle_graph::libtorch::detail {

void format_tensor_id(const CaptureState& s, const TensorKey& key, std::string& out) {
  out.clear();
  const std::uint32_t label = key.serial < s.serials.size() ? s.serials[key.serial].label : 0;
  if (label != 0) {
    out += s.labels[label];
  } else {
    out += 't';
    out += std::to_string(key.serial);
  }
  if (key.version != 0) out += '@' + std::to_string(key.version);
  if (key.view_op != 0) out += '~' + std::to_string(key.view_op - 1);
}

namespace {

// Memory category: the module's parameters and buffers, parameter gradients,
// then by the step of the span that allocated the block (trace6.md §4.13: backward → gradient,
// optimizer → optimizer, forward → activation); anything outside a step span is `other`.
MemoryCategory category_of(const CaptureState& s, std::uint64_t serial, SpanRef span) {
  if (s.parameter_serials.contains(serial)) return MemoryCategory::parameter;
  if (s.gradient_serials.contains(serial)) return MemoryCategory::gradient;
  switch (span.step) {
    case static_cast<std::int8_t>(ExecutionStep::backward):
      return MemoryCategory::gradient;
    case static_cast<std::int8_t>(ExecutionStep::optimizer):
      return MemoryCategory::optimizer;
    case static_cast<std::int8_t>(ExecutionStep::forward):
      return MemoryCategory::activation;
    default:
      return MemoryCategory::other;
  }
}

std::uint64_t exclusive_ns(const OpSample& op) {
  if (op.end_tick <= op.start_tick) return 0;  // never ended (capture stopped inside it)
  const std::int64_t wall = op.end_tick - op.start_tick;
  return wall > op.child_ticks ? static_cast<std::uint64_t>(wall - op.child_ticks) : 0;
}

}  // namespace

WrittenEvents write_events(const CaptureState& s, TraceSession& session) {
  WrittenEvents out;
  std::vector<std::string> input_ids;
  std::vector<std::string_view> input_views;
  std::string output_id;
  const std::string& default_device =
      s.device_labels.empty() ? std::string("cpu") : s.device_labels.front();
  for (const OpSample& op : s.ops) {
    input_ids.resize(op.inputs_count);
    input_views.resize(op.inputs_count);
    for (std::uint32_t i = 0; i < op.inputs_count; ++i) {
      format_tensor_id(s, s.inputs[op.inputs_begin + i], input_ids[i]);
      input_views[i] = input_ids[i];
    }
    OpRecord r;
    r.op_name = s.names[op.name];
    r.inputs = input_views;
    r.duration_ns = exclusive_ns(op);
    // Its true extent when recorded ops ran inside it, so that it encloses them on every
    // timeline (trace6.md §4.5.1); a leaf's extent is its duration.
    if (op.child_ticks > 0 && op.end_tick > op.start_tick) {
      r.total_ns = s.timestamp_ns(op.end_tick) - s.timestamp_ns(op.start_tick);
      // An op that began before the session's origin is clamped to it: its exclusive part can
      // never exceed the extent that is written (readers reject that).
      r.duration_ns = std::min(r.duration_ns, *r.total_ns);
    }
    r.timestamp_ns = s.timestamp_ns(op.start_tick);
    r.input_storage_bytes = op.input_bytes;
    if (op.has_output) {
      format_tensor_id(s, op.output, output_id);
      r.output = output_id;
      r.shape = std::span<const std::uint64_t>(s.shapes.data() + op.shape_begin, op.shape_len);
      r.dtype = s.dtype_labels[op.dtype];
      r.device = s.device_labels[op.device];
      r.storage_bytes = op.output_bytes;
    } else {
      r.device = default_device;  // autograd wrappers and ops returning no tensor
      r.storage_bytes = 0;
    }
    session.record_op(SpanId(op.span.number), r);
    ++out.ops;
  }

  // Memory: samples are in time order, so each free follows its alloc and takes its category.
  std::unordered_map<std::uint64_t, MemoryCategory> live;
  std::uint64_t live_bytes = 0;
  std::string id;
  const std::vector<std::uint64_t> no_shape;
  for (const MemorySample& m : s.memory_samples) {
    format_tensor_id(s, TensorKey{m.serial, 0, 0}, id);
    MemoryRecord r;
    r.tensor_id = id;
    r.device = s.device_labels[m.device];
    r.bytes = static_cast<std::uint64_t>(m.bytes > 0 ? m.bytes : -m.bytes);
    r.timestamp_ns = s.timestamp_ns(m.tick);
    if (m.op >= 0) r.op_name = s.names[s.ops[static_cast<std::size_t>(m.op)].name];
    const std::int32_t producer = s.serials[m.serial].producer;
    std::uint64_t raw_shape[1] = {r.bytes};
    if (producer >= 0) {
      const OpSample& p = s.ops[static_cast<std::size_t>(producer)];
      r.shape = std::span<const std::uint64_t>(s.shapes.data() + p.shape_begin, p.shape_len);
      r.dtype = s.dtype_labels[p.dtype];
    } else {
      r.shape = raw_shape;  // a block no op output was seen in: bytes of u8
      r.dtype = "u8";
    }
    if (m.bytes > 0) {
      r.category = category_of(s, m.serial, m.span);
      live.emplace(m.serial, r.category);
      live_bytes += r.bytes;
      out.peak_bytes = std::max(out.peak_bytes, live_bytes);
      session.record_memory_alloc(SpanId(m.span.number), r);
      ++out.allocs;
    } else {
      auto it = live.find(m.serial);
      if (it == live.end()) continue;  // cannot happen: the recorder only samples matched frees
      r.category = it->second;
      live.erase(it);
      live_bytes -= r.bytes;
      session.record_memory_free(SpanId(m.span.number), r);
      ++out.frees;
    }
  }
  out.live_at_end = live.size();
  out.live_bytes_at_end = live_bytes;
  return out;
}

}  // namespace candle_graph::libtorch::detail
