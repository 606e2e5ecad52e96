// trace6.md §5.3, one event as one line: compact JSON in the original's field order (serde
// declaration order, `kind` first), omitting what the original omits (absent Options), so a line we
// parse re-serializes to the same bytes.
#include <algorithm>
#include <vector>

#include "candle_graph/trace_events.hpp"
#include "output/json_text.hpp"

namespace candle_graph {
namespace {

using output::append_f64;
using output::append_json_string;
using output::append_u64;

class Line {
 public:
  Line(std::string& out, std::string_view kind) : out_(out) {
    out_.append("{\"kind\":");
    append_json_string(out_, kind);
  }
  ~Line() { out_.push_back('}'); }

  Line& str(std::string_view key, std::string_view v) {
    name(key);
    append_json_string(out_, v);
    return *this;
  }
  Line& opt_str(std::string_view key, const std::optional<std::string_view>& v) {
    return v ? str(key, *v) : *this;
  }
  Line& u64(std::string_view key, std::uint64_t v) {
    name(key);
    append_u64(out_, v);
    return *this;
  }
  Line& opt_u64(std::string_view key, const std::optional<std::uint64_t>& v) {
    return v ? u64(key, *v) : *this;
  }
  Line& boolean(std::string_view key, bool v) {
    name(key);
    out_.append(v ? "true" : "false");
    return *this;
  }
  Line& opt_f64(std::string_view key, const std::optional<double>& v) {
    if (v) {
      name(key);
      append_f64(out_, *v);
    }
    return *this;
  }
  Line& dims(std::string_view key, std::span<const std::uint64_t> v) {
    name(key);
    out_.push_back('[');
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i) out_.push_back(',');
      append_u64(out_, v[i]);
    }
    out_.push_back(']');
    return *this;
  }
  Line& strings(std::string_view key, std::span<const std::string_view> v) {
    name(key);
    out_.push_back('[');
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i) out_.push_back(',');
      append_json_string(out_, v[i]);
    }
    out_.push_back(']');
    return *this;
  }
  // Omitted when empty (trace6.md §4.2.1).
  Line& steps(std::string_view key, std::span<const ProfilerStepRecord> v) {
    if (v.empty()) return *this;
    name(key);
    out_.push_back('[');
    for (std::size_t i = 0; i < v.size(); ++i) {
      out_.append(i ? ",{\"step\":" : "{\"step\":");
      append_u64(out_, v[i].step);
      out_.append(",\"wall_ns\":");
      append_u64(out_, v[i].wall_ns);
      out_.append(",\"device_busy_ns\":");
      append_u64(out_, v[i].device_busy_ns);
      out_.push_back('}');
    }
    out_.push_back(']');
    return *this;
  }
  Line& tags(std::string_view key, std::span<const Tag> v) {
    // BTreeMap order on the wire: sorted by key.
    std::vector<const Tag*> sorted;
    for (const Tag& t : v) sorted.push_back(&t);
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const Tag* a, const Tag* b) { return a->key < b->key; });
    name(key);
    out_.push_back('{');
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      if (i) out_.push_back(',');
      append_json_string(out_, sorted[i]->key);
      out_.push_back(':');
      append_json_string(out_, sorted[i]->value);
    }
    out_.push_back('}');
    return *this;
  }

 private:
  void name(std::string_view key) {
    out_.push_back(',');
    out_.push_back('"');
    out_.append(key);  // our own ASCII field names: nothing to escape
    out_.append("\":");
  }
  std::string& out_;
};

void write(std::string& out, const MetaEvent& e) {
  const TraceRunMeta& r = e.run;
  Line(out, "meta")
      .str("schema", e.schema)
      .str("run_id", r.run_id)
      .str("correlation_id", r.correlation_id)
      .str("entrypoint", r.entrypoint)
      .str("phase", to_string(r.phase))
      .str("timestamp", r.timestamp)
      .u64("capture_step", r.capture_step)
      .u64("warmup_steps", r.warmup_steps)
      .str("device", r.device)
      .boolean("measured_region_device_synchronized", r.measured_region_device_synchronized)
      .str("timing_mode", to_string(r.timing_mode))
      .tags("tags", r.tags)
      .opt_str("candle_version", r.candle_version)
      .steps("profiler_steps", r.profiler_steps);
}

void write(std::string& out, const SpanStartEvent& e) {
  Line l(out, "span_start");
  l.str("id", e.id).opt_str("parent_id", e.parent_id).str("name", e.name);
  l.u64("start_ns", e.start_ns).str("span_kind", to_string(e.span_kind));
  l.boolean("measured", e.measured);
  if (e.step) l.str("step", to_string(*e.step));
}

void write(std::string& out, const SpanEndEvent& e) {
  Line(out, "span_end").str("id", e.id).u64("duration_ns", e.duration_ns);
}

void write(std::string& out, const OpEvent& e) {
  Line line(out, "op");
  line.str("span_id", e.span_id)
      .str("op_name", e.op_name)
      .strings("inputs", e.inputs)
      .opt_str("output", e.output)
      .dims("shape", e.shape)
      .str("dtype", e.dtype)
      .str("device", e.device)
      .u64("duration_ns", e.duration_ns)
      .u64("timestamp_ns", e.timestamp_ns)
      .opt_u64("storage_bytes", e.storage_bytes)
      .opt_u64("input_storage_bytes", e.input_storage_bytes);
  // trace6.md §4.5.1, each omitted when absent (a plain host op writes none of them).
  if (e.op_kind != OpKind::host) line.str("op_kind", to_string(e.op_kind));
  line.opt_u64("total_ns", e.total_ns);
  line.opt_u64(is_device_kind(e.op_kind) ? "stream" : "thread", e.lane);
  line.opt_u64("correlation", e.correlation);
  if (e.collective) {
    line.str("collective", e.collective->name);
    if (!e.collective->process_group.empty())
      line.str("process_group", e.collective->process_group);
    line.opt_u64("collective_seq", e.collective->seq);
  }
}

void write(std::string& out, const TensorEvent& e) {
  Line(out, "tensor")
      .str("span_id", e.span_id)
      .str("tensor_id", e.tensor_id)
      .dims("shape", e.shape)
      .str("dtype", e.dtype)
      .str("device", e.device)
      .boolean("requires_grad", e.requires_grad)
      .opt_u64("storage_bytes", e.storage_bytes)
      .str("category", to_string(e.category));
}

void write(std::string& out, const MemoryEvent& e) {
  Line(out, "memory")
      .u64("timestamp_ns", e.timestamp_ns)
      .str("tensor_id", e.tensor_id)
      .str("span_id", e.span_id)
      .opt_str("op_name", e.op_name)
      .str("device", e.device)
      .u64("bytes", e.bytes)
      .str("action", to_string(e.action))
      .dims("shape", e.shape)
      .str("dtype", e.dtype)
      .str("category", to_string(e.category));
}

void write(std::string& out, const DeviceMemoryEvent& e) {
  Line(out, "device_memory")
      .u64("timestamp_ns", e.timestamp_ns)
      .str("device", e.device)
      .u64("used_bytes", e.used_bytes)
      .u64("free_bytes", e.free_bytes)
      .opt_u64("reserved_bytes", e.reserved_bytes);
}

void write(std::string& out, const GradientEvent& e) {
  Line(out, "gradient")
      .str("event_id", e.event_id)
      .str("root", e.root)
      .str("key", e.key)
      .str("state", to_string(e.state))
      .opt_f64("norm", e.norm);
}

void write(std::string& out, const EdgeEvent& e) {
  Line(out, "edge")
      .str("from_span", e.from_span)
      .str("to_span", e.to_span)
      .u64("duration_ns", e.duration_ns);
}

}  // namespace

void append_event_json(std::string& out, const TraceEvent& event) {
  std::visit([&](const auto& e) { write(out, e); }, event);
}

}  // namespace candle_graph
