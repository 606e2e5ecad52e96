// Each event's fields are read once (a loop over its keys); `args` is read only for the roles
// that use it. Numbers may be integers or fractional µs; pid/tid are not needed (a device op's
// GPU index comes from args.device, else from its integer pid).
#include "import/trace_event/event_decoder.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include "candle_graph/error.hpp"
#include "candle_graph/trace.hpp"
#include "format/chrome.hpp"
#include "import/trace_event/kineto_vocabulary.hpp"
#include "trace/huge_pages.hpp"

namespace candle_graph::import::trace_event {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

constexpr std::size_t kDecodeBatchBytes = std::size_t{1}
                                          << 20;  // events parsed by simdjson at once

// µs (integer or fractional, or a numeric string) -> integer ns.
std::optional<std::int64_t> us_to_ns(element e) {
  constexpr double kLimit = 9.0e18;
  switch (e.type()) {
    case element_type::INT64: {
      const std::int64_t v = e.get_int64().value_unsafe();
      if (v > static_cast<std::int64_t>(kLimit / 1000) ||
          v < -static_cast<std::int64_t>(kLimit / 1000)) {
        return std::nullopt;
      }
      return v * 1000;
    }
    case element_type::UINT64:
      return std::nullopt;  // beyond int64 µs: not a timestamp
    case element_type::DOUBLE: {
      const double d = e.get_double().value_unsafe() * 1000.0;
      if (!std::isfinite(d) || std::fabs(d) > kLimit) return std::nullopt;
      return static_cast<std::int64_t>(std::llround(d));
    }
    case element_type::STRING: {
      const std::string_view s = e.get_string().value_unsafe();
      double d = 0;
      const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
      if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
      d *= 1000.0;
      if (!std::isfinite(d) || std::fabs(d) > kLimit) return std::nullopt;
      return static_cast<std::int64_t>(std::llround(d));
    }
    default:
      return std::nullopt;
  }
}

// Why `e` is not a time us_to_ns can take (called only after it refused it).
std::string time_problem(element e) {
  double d = 0;
  switch (e.type()) {
    case element_type::INT64:
    case element_type::UINT64:
      return "out_of_range";
    case element_type::DOUBLE:
      d = e.get_double().value_unsafe();
      break;
    case element_type::STRING: {
      const std::string_view s = e.get_string().value_unsafe();
      const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
      if (ec == std::errc::result_out_of_range) return "out_of_range";
      if (ec != std::errc() || end != s.data() + s.size()) return "not_a_number";
      break;
    }
    default:
      return "not_a_number";
  }
  return std::isfinite(d) ? "out_of_range" : "non_finite";
}

std::optional<std::int64_t> as_int(element e) {
  switch (e.type()) {
    case element_type::INT64:
      return e.get_int64().value_unsafe();
    case element_type::UINT64: {
      const std::uint64_t v = e.get_uint64().value_unsafe();
      return static_cast<std::int64_t>(v);  // addresses above 2^63 keep their bits
    }
    case element_type::DOUBLE: {
      const double d = e.get_double().value_unsafe();
      if (!std::isfinite(d) || std::fabs(d) > 9.0e18) return std::nullopt;
      return static_cast<std::int64_t>(d);
    }
    case element_type::STRING: {
      const std::string_view s = e.get_string().value_unsafe();
      std::int64_t v = 0;
      int base = 10;
      std::string_view digits = s;
      if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        digits = s.substr(2);
      }
      const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, base);
      if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
      return v;
    }
    default:
      return std::nullopt;
  }
}

std::optional<std::uint64_t> as_u64(element e) {
  if (e.type() == element_type::UINT64) return e.get_uint64().value_unsafe();
  const auto v = as_int(e);
  if (!v || *v < 0) return std::nullopt;
  return static_cast<std::uint64_t>(*v);
}

std::string_view as_string(element e) {
  std::string_view s;
  if (e.get_string().get(s)) return {};
  return s;
}

// A JSON array of non-negative integers (one tensor's dims); false for anything else.
bool read_dims(element e, std::vector<std::uint64_t>& out) {
  out.clear();
  simdjson::dom::array arr;
  if (e.get_array().get(arr)) return false;
  for (element d : arr) {
    const auto v = as_u64(d);
    if (!v) return false;
    out.push_back(*v);
  }
  return true;
}

}  // namespace

EventDecoder::EventDecoder(std::string path, Model& model)
    : path_(std::move(path)), m_(model), memory_(path_) {
  batch_.reserve(kDecodeBatchBytes + 2 * simdjson::SIMDJSON_PADDING);
}

void EventDecoder::fail(std::uint64_t offset, const std::string& what) const {
  throw Error(path_, 0, what + " in the event at byte " + std::to_string(offset));
}

void EventDecoder::event(std::string_view bytes, std::uint64_t offset) {
  if (!batch_.empty() && batch_.size() + bytes.size() + 1 > kDecodeBatchBytes) flush();
  starts_.emplace_back(batch_.size(), offset);
  batch_.insert(batch_.end(), bytes.begin(), bytes.end());
  batch_.push_back('\n');
}

void EventDecoder::top_level_value(std::string_view key, std::string_view raw, std::uint64_t) {
  m_.top_level[std::string(key)] = std::string(raw);
}

void EventDecoder::finish() {
  flush();
}

void EventDecoder::flush() {
  if (starts_.empty()) return;
  const std::size_t size = batch_.size();
  batch_.resize(size + simdjson::SIMDJSON_PADDING, '\0');
  std::size_t done = 0;
  simdjson::dom::document_stream stream;
  // A constant window (unless one event is larger) keeps the parser's buffers allocated once.
  const std::size_t window = std::max(size, kDecodeBatchBytes);
  if (!parser_.parse_many(reinterpret_cast<const std::uint8_t*>(batch_.data()), size, window)
           .get(stream)) {
    for (auto it = stream.begin(); it != stream.end() && done < starts_.size(); ++it) {
      element doc;
      if ((*it).get(doc) || it.current_index() != starts_[done].first) break;
      decode(doc, starts_[done].second);
      ++done;
    }
  }
  // What the batch could not take (an invalid event, or documents that did not line up with the
  // scanner's boundaries): one event at a time, so the error names the right event.
  for (; done < starts_.size(); ++done) {
    const std::size_t begin = starts_[done].first;
    const std::size_t end = done + 1 < starts_.size() ? starts_[done + 1].first - 1 : size - 1;
    element doc;
    const auto error = single_.parse(batch_.data() + begin, end - begin, false).get(doc);
    if (error)
      fail(starts_[done].second,
           std::string("malformed JSON (") + simdjson::error_message(error) + ")");
    decode(doc, starts_[done].second);
  }
  memory_.check(starts_.back().second);
  batch_.clear();
  starts_.clear();
}

// The members of one event that the passes below read; `args` only for the roles that use it.
struct EventDecoder::Fields {
  std::string_view ph, cat, name;
  bool has_cat = false;
  bool has_name = false;  // a string, which may be empty (a trace/6 span may have an empty name)
  std::optional<std::int64_t> ts_ns;  // absent when missing or not a number of µs
  element ts;
  bool has_ts = false;
  std::uint64_t offset = 0;  // of the event in the file, for the counts of bad values
  element dur, id, pid, tid;
  bool has_dur = false, has_id = false, has_pid = false, has_tid = false;
  simdjson::dom::object args;
  bool has_args = false;
};

EventDecoder::Fields EventDecoder::read_fields(simdjson::dom::object obj) const {
  Fields f;
  element args;
  for (simdjson::dom::key_value_pair kv : obj) {
    const std::string_view k = kv.key;
    if (k == "ph") {
      f.ph = as_string(kv.value);
    } else if (k == "cat") {
      f.cat = as_string(kv.value);
      f.has_cat = true;
    } else if (k == "name") {
      f.has_name = kv.value.get_string().get(f.name) == simdjson::SUCCESS;
    } else if (k == "ts") {
      f.ts = kv.value;
      f.has_ts = true;
    } else if (k == "dur") {
      f.dur = kv.value;
      f.has_dur = true;
    } else if (k == "id") {
      f.id = kv.value;
      f.has_id = true;
    } else if (k == "pid") {
      f.pid = kv.value;
      f.has_pid = true;
    } else if (k == "tid") {
      f.tid = kv.value;
      f.has_tid = true;
    } else if (k == "args") {
      args = kv.value;
      f.has_args = true;
    }
  }
  if (f.has_ts) f.ts_ns = us_to_ns(f.ts);
  if (f.has_args && args.get_object().get(f.args)) f.has_args = false;
  return f;
}

void EventDecoder::decode(element event, std::uint64_t offset) {
  ++m_.events;
  ++order_;
  simdjson::dom::object obj;
  if (event.get_object().get(obj)) fail(offset, "an event is not a JSON object");
  Fields f = read_fields(obj);
  f.offset = offset;
  if (f.ph.size() != 1) {
    ++m_.malformed_events;
    m_.bad_values.reject(f.ph.empty() ? "missing_ph" : "unknown_ph", offset);
    return;
  }
  const char p = f.ph[0];
  if (p == 'M') {
    ++m_.metadata_events;
  } else if (p == 'X') {
    decode_slice(f);
  } else if ((p == 'i' || p == 'I') && f.cat == format::chrome::kOpCategory) {
    decode_slice(f);  // our Chrome export's op of no duration
  } else if ((p == 'i' || p == 'I') && f.name == "[memory]") {
    decode_memory(f);
  } else if (p == 's' || p == 'f' || p == 't') {
    decode_flow(f, p);
  } else {
    ++m_.ignored[std::string("ph_") + p];
  }
}

bool EventDecoder::reject_without_time(const Fields& f) {
  if (f.ts_ns) return false;
  ++m_.malformed_events;
  m_.bad_values.reject(f.has_ts ? "ts_" + time_problem(f.ts) : "missing_ts", f.offset);
  return true;
}

void EventDecoder::decode_slice(const Fields& f) {
  if (reject_without_time(f)) return;
  if (!f.has_name) {
    ++m_.malformed_events;
    m_.bad_values.reject("missing_name", f.offset);
    return;
  }
  Slice s;
  s.ts_ns = *f.ts_ns;
  if (f.has_dur) {
    const auto d = us_to_ns(f.dur);
    s.dur_ns = d && *d > 0 ? *d : 0;
    if (!d || *d < 0) {  // negative or not a number of µs: a repair, the slice is kept
      ++m_.zeroed_durations;
      m_.bad_values.repair(d ? "negative_dur" : "dur_" + time_problem(f.dur), f.offset);
    }
  }
  s.role = f.has_cat ? kineto_role(f.cat, f.name) : legacy_role(f.name);
  if (f.has_cat) ++m_.slice_events_with_cat;
  if (s.role == Role::ignored) {
    ++m_.ignored[f.has_cat ? std::string(f.cat) : std::string("(no cat)")];
    return;
  }
  if (s.role == Role::runtime) {
    record_launch(f, s.ts_ns);
    s.kind = OpKind::runtime;
    if (f.has_args) {
      element c;
      if (!f.args["correlation"].get(c)) s.correlation = correlation_of(c, f.offset);
    }
  }
  if (f.has_tid) s.lane = lane_of(f.tid);
  s.name = m_.strings.intern(f.name);
  if (f.has_args) {
    if (s.role == Role::cpu_op) {
      read_input_shapes(f.args, s);
      read_collective_args(f.args, s);
    } else if (s.role == Role::device_op) {
      s.kind = device_kind(f.cat);
      read_device_args(f.args, s, f.offset);
      read_collective_args(f.args, s);
    } else if (s.role == Role::candle_span) {
      s.extra = static_cast<std::uint32_t>(m_.candle_spans.size());
      m_.candle_spans.push_back(read_candle_span_args(f.args));
    } else if (s.role == Role::candle_op || s.role == Role::candle_device) {
      s.extra = static_cast<std::uint32_t>(m_.candle_ops.size());
      m_.candle_ops.push_back(read_candle_op_args(f.args));
    }
  } else if (s.role == Role::candle_span) {
    s.extra = static_cast<std::uint32_t>(m_.candle_spans.size());
    m_.candle_spans.push_back({});
  } else if (s.role == Role::candle_op || s.role == Role::candle_device) {
    s.extra = static_cast<std::uint32_t>(m_.candle_ops.size());
    m_.candle_ops.push_back({});
  }
  if (s.role == Role::device_op && s.kind == OpKind::host) s.kind = device_kind(f.cat);
  // Our export's device work: what the cat says, for a slice whose args lack op_kind.
  if (s.role == Role::candle_device)
    s.kind = f.cat == format::chrome::kSyncCategory ? OpKind::sync : OpKind::kernel;
  if (s.role == Role::device_op && s.device < 0 && f.has_pid) {
    const auto pid = as_int(f.pid);
    if (pid && *pid >= 0 && *pid < 1024) s.device = static_cast<std::int32_t>(*pid);
  }
  // Not the legacy profiler's cat-less rows: their pid is a label ("CPU functions", and
  // "CUDA functions" for the kernels that older versions wrote), never a process.
  if (s.role == Role::cpu_op && f.has_cat && f.has_pid) note_host_process(f.pid);
  push_back_in_huge_pages(m_.slices, s);  // the largest array of a large trace
}

// `record_param_comms` (and, in newer PyTorch, the NCCL kernel itself) names the collective, its
// process group and the group's sequence number: the identity ranks match calls by.
void EventDecoder::read_collective_args(simdjson::dom::object args, Slice& s) {
  element v;
  if (args["Collective name"].get(v) || !v.is_string()) return;
  CollectiveArgs c;
  c.name = m_.strings.intern(as_string(v));
  if (!args["Process Group Name"].get(v) && v.is_string())
    c.process_group = m_.strings.intern(as_string(v));
  if (!args["Seq"].get(v)) c.seq = as_u64(v);
  s.extra = static_cast<std::uint32_t>(m_.collectives.size());
  m_.collectives.push_back(c);
}

// A correlation id that is not a number links nothing: -1, counted as a repair.
std::int64_t EventDecoder::correlation_of(element c, std::uint64_t offset) {
  if (const auto v = as_int(c)) return *v;
  m_.bad_values.repair("non_numeric_correlation", offset);
  return -1;
}

// A runtime call's correlation id gives its device work a launch time.
void EventDecoder::record_launch(const Fields& f, std::int64_t ts_ns) {
  if (!f.has_args) return;
  element c;
  if (!f.args["correlation"].get(c)) {
    if (const auto v = as_int(c)) m_.launch_ns.try_emplace(*v, ts_ns);
  }
}

// A CPU op's recorded inputs: the first typed input's shape and dtype, and the dense bytes of all.
void EventDecoder::read_input_shapes(simdjson::dom::object args, Slice& s) {
  element dims_el, types_el;
  simdjson::dom::array dims_arr, types_arr;
  const bool has_dims = !args["Input Dims"].get(dims_el) && !dims_el.get_array().get(dims_arr);
  if (!has_dims) return;
  const bool has_types = !args["Input type"].get(types_el) && !types_el.get_array().get(types_arr);
  auto type_it = has_types ? types_arr.begin() : simdjson::dom::array::iterator{};
  const auto type_end = has_types ? types_arr.end() : simdjson::dom::array::iterator{};
  for (element d : dims_arr) {
    std::string_view type;
    if (has_types && type_it != type_end) {
      type = as_string(*type_it);
      ++type_it;
    }
    if (!read_dims(d, shape_)) continue;
    const std::string_view label = torch_dtype_label(type);
    if (s.dims == kNone && !type.empty()) {
      s.dims = m_.push_dims(shape_);
      s.dtype = m_.strings.intern(label);
    }
    s.input_bytes += storage_bytes(shape_, label);
  }
}

void EventDecoder::read_device_args(simdjson::dom::object args, Slice& s, std::uint64_t offset) {
  element v;
  if (!args["correlation"].get(v)) s.correlation = correlation_of(v, offset);
  if (!args["device"].get(v)) s.device = static_cast<std::int32_t>(as_int(v).value_or(-1));
  if (!args["bytes"].get(v)) s.bytes = as_u64(v).value_or(0);
  // A numeric stream; ROCm writes "0x0"-style strings, and then the row's tid is the stream
  // (pytorch.md §C4), set by decode_slice before the args are read.
  if (!args["stream"].get(v)) {
    const auto stream = as_int(v);
    if (stream && *stream >= 0 && v.type() != simdjson::dom::element_type::STRING)
      s.lane = static_cast<std::uint64_t>(*stream);
  }
}

// A tid: an integer, or a string interned and marked with bit 62 (2021 Kineto names its GPU rows
// "stream 7").
std::uint64_t EventDecoder::lane_of(element tid) {
  if (const auto v = as_int(tid); v && *v >= 0 && tid.type() != simdjson::dom::element_type::STRING)
    return static_cast<std::uint64_t>(*v);
  return static_cast<std::uint64_t>(m_.strings.intern(as_string(tid))) | (std::uint64_t{1} << 62);
}

namespace {

// Adds `v` to `seen` (one of Model's two lists of pids) unless it is there or the lists are full.
template <class T>
void note_once(std::vector<T>& seen, T v, Model& m) {
  if (std::find(seen.begin(), seen.end(), v) != seen.end()) return;
  if (m.host_pids.size() + m.host_pid_names.size() < kMaxHostProcesses)
    seen.push_back(v);
  else
    m.more_host_processes = true;
}

}  // namespace

// The pid of a host op, noted once (Model::host_pids). A fractional pid names no process. Cold
// though it runs for every op: its work is one comparison then, and compiled as hot code it
// took enough of this unit's inlining budget that the decoder's simdjson lookups were called
// out of line instead (+0.8% instructions for `validate`, callgrind; +0.2% cold).
[[gnu::cold]] void EventDecoder::note_host_process(element pid) {
  const auto type = pid.type();
  if (type == simdjson::dom::element_type::INT64) {
    const std::int64_t n = pid.get_int64().value_unsafe();
    if (n == last_host_pid_ && !m_.host_pids.empty()) return;  // the usual case: one process
    last_host_pid_ = n;
    note_once(m_.host_pids, n, m_);
  } else if (type == simdjson::dom::element_type::UINT64) {
    note_once(m_.host_pids, static_cast<std::int64_t>(pid.get_uint64().value_unsafe()), m_);
  } else if (type == simdjson::dom::element_type::STRING) {
    note_once(m_.host_pid_names, m_.strings.intern(as_string(pid)), m_);
  }
}

CandleSpanArgs EventDecoder::read_candle_span_args(simdjson::dom::object args) {
  CandleSpanArgs c;
  element v;
  if (!args["span_id"].get(v)) c.span_id = m_.strings.intern(as_string(v));
  if (!args["parent_id"].get(v) && v.is_string()) c.parent_id = m_.strings.intern(as_string(v));
  if (!args["measured"].get(v)) c.measured = v.is_bool() && v.get_bool().value_unsafe();
  if (!args["step"].get(v) && v.is_string()) {
    if (const auto st = parse_execution_step(as_string(v))) c.step = static_cast<std::int8_t>(*st);
  }
  if (!args["span_kind"].get(v) && v.is_string()) {
    if (const auto k = parse_span_kind(as_string(v))) c.span_kind = static_cast<std::int8_t>(*k);
  }
  if (!args["start_ns"].get(v)) c.start_ns = as_u64(v);
  if (!args["duration_ns"].get(v)) c.duration_ns = as_u64(v);
  return c;
}

CandleOpArgs EventDecoder::read_candle_op_args(simdjson::dom::object args) {
  CandleOpArgs c;
  element v;
  if (!args["span_id"].get(v)) c.span_id = m_.strings.intern(as_string(v));
  if (!args["op_name"].get(v) && v.is_string()) c.op_name = m_.strings.intern(as_string(v));
  simdjson::dom::array arr;
  if (!args["inputs"].get(v) && !v.get_array().get(arr)) {
    c.inputs_begin = static_cast<std::uint32_t>(m_.candle_inputs.size());
    for (element in : arr) m_.candle_inputs.push_back(m_.strings.intern(as_string(in)));
    c.inputs_count = static_cast<std::uint32_t>(m_.candle_inputs.size() - c.inputs_begin);
  }
  if (!args["output"].get(v) && v.is_string()) c.output = m_.strings.intern(as_string(v));
  if (!args["shape"].get(v) && read_dims(v, shape_)) c.shape = m_.push_dims(shape_);
  if (!args["dtype"].get(v)) c.dtype = m_.strings.intern(as_string(v));
  if (!args["device"].get(v)) c.device = m_.strings.intern(as_string(v));
  if (!args["timestamp_ns"].get(v)) c.timestamp_ns = as_u64(v);
  if (!args["duration_ns"].get(v)) c.duration_ns = as_u64(v);
  if (!args["storage_bytes"].get(v)) c.storage_bytes = as_u64(v);
  if (!args["input_storage_bytes"].get(v)) c.input_storage_bytes = as_u64(v);
  if (!args["op_kind"].get(v) && v.is_string()) {
    if (const auto k = parse_op_kind(as_string(v))) c.op_kind = static_cast<std::int8_t>(*k);
  }
  if (!args["total_ns"].get(v)) c.total_ns = as_u64(v);
  if (!args["thread"].get(v)) c.lane = as_u64(v);
  if (!args["stream"].get(v)) c.lane = as_u64(v);  // device work (chrome.md §E8)
  if (!args["correlation"].get(v)) c.correlation = as_u64(v);
  if (!args["collective"].get(v) && v.is_string()) c.collective = m_.strings.intern(as_string(v));
  if (!args["process_group"].get(v) && v.is_string())
    c.process_group = m_.strings.intern(as_string(v));
  if (!args["collective_seq"].get(v)) c.collective_seq = as_u64(v);
  return c;
}

// A `[memory]` instant (profile_memory=True): one side of an allocation, paired later by address.
void EventDecoder::decode_memory(const Fields& f) {
  if (reject_without_time(f)) return;
  if (!f.has_args) {
    ++m_.malformed_events;
    m_.bad_values.reject("memory_event_without_args", f.offset);
    return;
  }
  MemoryInstant mi;
  mi.ts_ns = *f.ts_ns;
  mi.order = order_;
  element v;
  std::int64_t type = 0, device = -1;
  if (!f.args["Addr"].get(v)) mi.addr = static_cast<std::uint64_t>(as_int(v).value_or(0));
  if (!f.args["Bytes"].get(v)) mi.bytes = as_int(v).value_or(0);
  if (!f.args["Device Type"].get(v)) type = as_int(v).value_or(0);
  if (!f.args["Device Id"].get(v)) device = as_int(v).value_or(-1);
  if (mi.bytes == 0) {
    ++m_.ignored["[memory] with 0 bytes"];
    return;
  }
  mi.device = m_.strings.intern(memory_device_label(type, device));
  m_.memory.push_back(mi);
}

// A flow event (`s`/`f`/`t`): counted; a launch flow's start is a launch time.
void EventDecoder::decode_flow(const Fields& f, char ph) {
  if (reject_without_time(f)) return;
  if (!f.has_id) {
    ++m_.malformed_events;
    m_.bad_values.reject("missing_flow_id", f.offset);
    return;
  }
  Flow flow;
  flow.ph = ph;
  flow.ts_ns = *f.ts_ns;
  if (const auto id = as_int(f.id)) {
    flow.id = *id;
  } else {  // kept under a number of its own, so its partner with the same id still matches
    flow.id =
        static_cast<std::int64_t>(m_.strings.intern(as_string(f.id))) | (std::int64_t{1} << 62);
    m_.bad_values.repair("non_numeric_flow_id", f.offset);
  }
  flow.cat = m_.strings.intern(f.cat);
  if (ph == 's' && (f.cat == "ac2g" || f.cat == "async"))
    m_.launch_ns.try_emplace(flow.id, flow.ts_ns);
  push_back_in_huge_pages(m_.flows, flow);
}

std::uint32_t Model::push_dims(const std::vector<std::uint64_t>& shape) {
  const auto at = static_cast<std::uint32_t>(dims.size());
  dims.push_back(shape.size());
  dims.insert(dims.end(), shape.begin(), shape.end());
  return at;
}

std::vector<std::uint64_t> Model::dims_at(std::uint32_t index) const {
  if (index == kNone) return {};
  const std::uint64_t n = dims[index];
  return {dims.begin() + index + 1, dims.begin() + index + 1 + static_cast<std::ptrdiff_t>(n)};
}

std::uint32_t Interner::intern(std::string_view s) {
  const auto it = ids_.find(s);
  if (it != ids_.end()) return it->second;
  const std::string& stored = store_.emplace_back(s);
  const auto id = static_cast<std::uint32_t>(by_id_.size());
  by_id_.push_back(stored);
  ids_.emplace(stored, id);
  return id;
}

}  // namespace candle_graph::import::trace_event
