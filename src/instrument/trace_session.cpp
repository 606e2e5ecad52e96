// §13.2 TraceSession: the record_* hot path. Each record is formatted outside the session lock
// into a per-thread buffer (no heap allocation once the buffer has grown), with the trace
// writer's own append_event_json so the bytes are exactly what the reader accepts, and then
// appended to the session's buffer of whole lines under the lock.
#include <charconv>
#include <cmath>

#include "candle_graph/instrument.hpp"
#include "instrument/session_state.hpp"

namespace candle_graph {
namespace {

void append_line(detail::SessionState& state, const TraceEvent& event, std::uint64_t span) {
  std::string& line = detail::thread_line();
  append_event_json(line, event);
  line.push_back('\n');
  state.append_record(line, span);
}

MemoryEvent memory_event(detail::SessionState& state, std::string_view span_id,
                         const MemoryRecord& m, MemoryAction action) {
  return MemoryEvent{m.timestamp_ns ? *m.timestamp_ns : state.elapsed_ns(),
                     m.tensor_id,
                     span_id,
                     m.op_name,
                     m.device,
                     m.bytes,
                     action,
                     m.shape,
                     m.dtype,
                     m.category};
}

}  // namespace

TraceSession::TraceSession(const std::filesystem::path& path, const ProfileRun& run)
    : state_(std::make_unique<detail::SessionState>(path, run)) {}

TraceSession::TraceSession(TraceSession&&) noexcept = default;

TraceSession& TraceSession::operator=(TraceSession&& other) noexcept {
  if (this != &other) {
    TraceSession old(std::move(*this));  // finishes the current trace first
    state_ = std::move(other.state_);
  }
  return *this;
}

TraceSession::~TraceSession() {
  if (!state_) return;
  try {
    state_->finish();
  } catch (...) {
    // Destructors cannot throw; call finish() explicitly to see misuse and I/O errors.
  }
  // Guards still alive keep the state; the last one to end deletes it.
  if (!state_->release_owner()) (void)state_.release();
}

detail::SessionState& TraceSession::state() const {
  if (!state_)
    throw InstrumentError({}, "this TraceSession was moved from; use the session it was moved to");
  return *state_;
}

SpanGuard TraceSession::begin_measurement(std::string_view name) {
  return state().begin(name, SpanKind::function, true, std::nullopt);
}

SpanGuard TraceSession::begin_span(std::string_view name, SpanKind kind) {
  return state().begin(name, kind, false, std::nullopt);
}

SpanGuard TraceSession::begin_step_span(std::string_view name, ExecutionStep step, SpanKind kind) {
  return state().begin(name, kind, false, step);
}

void TraceSession::record_op(SpanId span, const OpRecord& op) {
  detail::SessionState& s = state();
  char id_buf[24];
  OpEvent e;
  e.span_id = detail::format_span_id(span.number(), id_buf);
  e.op_name = op.op_name;
  e.inputs = op.inputs;
  e.output = op.output;
  e.shape = op.shape;
  e.dtype = op.dtype;
  e.device = op.device;
  e.duration_ns = op.duration_ns;
  e.timestamp_ns = op.timestamp_ns != 0 ? op.timestamp_ns : s.elapsed_ns();  // §17.7
  e.storage_bytes = resolve_storage_bytes(op.storage_bytes, op.shape, op.dtype);
  e.input_storage_bytes = op.input_storage_bytes;
  append_line(s, TraceEvent(e), span.number());
}

void TraceSession::record_tensor(SpanId span, const TensorRecord& t) {
  detail::SessionState& s = state();
  char id_buf[24];
  TensorEvent e;
  e.span_id = detail::format_span_id(span.number(), id_buf);
  e.tensor_id = t.tensor_id;
  e.shape = t.shape;
  e.dtype = t.dtype;
  e.device = t.device;
  e.requires_grad = t.requires_grad;
  e.storage_bytes = resolve_storage_bytes(t.storage_bytes, t.shape, t.dtype);
  e.category = t.category;
  append_line(s, TraceEvent(e), span.number());
}

void TraceSession::record_memory_alloc(SpanId span, const MemoryRecord& m) {
  detail::SessionState& s = state();
  char id_buf[24];
  const auto id = detail::format_span_id(span.number(), id_buf);
  append_line(s, TraceEvent(memory_event(s, id, m, MemoryAction::alloc)), span.number());
}

void TraceSession::record_memory_free(SpanId span, const MemoryRecord& m) {
  detail::SessionState& s = state();
  char id_buf[24];
  const auto id = detail::format_span_id(span.number(), id_buf);
  append_line(s, TraceEvent(memory_event(s, id, m, MemoryAction::free)), span.number());
}

void TraceSession::record_device_memory(std::string_view device, std::uint64_t used_bytes,
                                        std::uint64_t free_bytes,
                                        std::optional<std::uint64_t> timestamp_ns,
                                        std::optional<std::uint64_t> reserved_bytes) {
  detail::SessionState& s = state();
  const DeviceMemoryEvent e{timestamp_ns ? *timestamp_ns : s.elapsed_ns(), device, used_bytes,
                            free_bytes, reserved_bytes};
  append_line(s, TraceEvent(e), 1);  // not tied to a span; 1 always exists
}

std::uint64_t TraceSession::record_gradient(std::string_view root, std::string_view key,
                                            GradientState state_value, std::optional<double> norm) {
  detail::SessionState& s = state();
  const std::uint64_t n = s.next_gradient_number();
  char id_buf[32] = "gradient-";
  const auto r = std::to_chars(id_buf + 9, id_buf + sizeof id_buf, n);
  if (norm && !std::isfinite(*norm)) norm.reset();  // JSON has no NaN/inf
  const GradientEvent e{std::string_view(id_buf, static_cast<std::size_t>(r.ptr - id_buf)), root,
                        key, state_value, norm};
  append_line(s, TraceEvent(e), 1);
  return n;
}

void TraceSession::record_edge(SpanId from, SpanId to, std::uint64_t duration_ns) {
  detail::SessionState& s = state();
  char from_buf[24];
  char to_buf[24];
  const EdgeEvent e{detail::format_span_id(from.number(), from_buf),
                    detail::format_span_id(to.number(), to_buf), duration_ns};
  std::string& line = detail::thread_line();
  append_event_json(line, TraceEvent(e));
  line.push_back('\n');
  s.append_record(line, from.number(), to.number());  // both ends must be spans of this session
}

std::uint64_t TraceSession::elapsed_ns() const {
  return state().elapsed_ns();
}
const std::filesystem::path& TraceSession::path() const {
  return state().path();
}
bool TraceSession::finished() const {
  return state().finished();
}
void TraceSession::flush() {
  state().flush();
}
std::filesystem::path TraceSession::finish() {
  return state().finish();
}

}  // namespace candle_graph
