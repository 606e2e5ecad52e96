// trace6.md §13.2 TraceSession: the record_* hot path. Each record is formatted outside the session
// lock into a per-thread buffer (event_line.hpp: no heap allocation, the trace writer's exact
// bytes) and then appended to the session's buffer of whole lines under the lock.
#include <charconv>
#include <cmath>

#include "candle_graph/instrument.hpp"
#include "instrument/event_line.hpp"
#include "instrument/session_state.hpp"

namespace candle_graph {
namespace {

// trace6.md §4.12 element size of the exact labels producers write ("f32", "bf16", …): a switch
// instead of the general trim + lowercase lookup; 0 sends every other label to
// resolve_storage_bytes.
std::uint64_t exact_dtype_size(std::string_view d) noexcept {
  if (d.size() == 3) {
    const bool bits32 = d[1] == '3' && d[2] == '2', bits64 = d[1] == '6' && d[2] == '4',
               bits16 = d[1] == '1' && d[2] == '6';
    if (d[0] == 'f' || d[0] == 'i' || d[0] == 'u') {
      if (bits32) return 4;
      if (bits64) return 8;
      if (bits16) return 2;
    }
    return 0;
  }
  if (d.size() == 2 && d[1] == '8' && (d[0] == 'u' || d[0] == 'i' || d[0] == 'f')) return 1;
  if (d == "bf16") return 2;
  if (d == "bool") return 1;
  return 0;
}

}  // namespace

// Same result as resolve_storage_bytes (tests/instrument/storage_bytes_test.cpp), faster.
std::uint64_t detail::resolve_record_bytes(std::optional<std::uint64_t> explicit_bytes,
                                           std::span<const std::uint64_t> shape,
                                           std::string_view dtype) noexcept {
  if (explicit_bytes) return *explicit_bytes;
  const std::uint64_t size = exact_dtype_size(dtype);
  if (size == 0) return resolve_storage_bytes(std::nullopt, shape, dtype);
  // elem_count (saturating, so a later 0 dimension still gives 0) × size, inline: this runs
  // once per recorded op.
  std::uint64_t count = 1;
  for (std::uint64_t d : shape)
    if (__builtin_mul_overflow(count, d, &count)) count = ~std::uint64_t{0};
  std::uint64_t bytes = 0;
  return __builtin_mul_overflow(count, size, &bytes) ? ~std::uint64_t{0} : bytes;
}

namespace {

MemoryEvent memory_event(detail::SessionState& state, std::string_view span_id,
                         const MemoryRecord& m, MemoryAction action) {
  return MemoryEvent{m.timestamp_ns ? *m.timestamp_ns : state.elapsed_ns(),
                     m.tensor_id,
                     span_id,
                     m.op_name,
                     m.device,
                     m.bytes,
                     m.shape,
                     m.dtype,
                     action,
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

SpanGuard TraceSession::begin_step_span_at(std::string_view name, ExecutionStep step,
                                           std::uint64_t start_ns, SpanKind kind) {
  return state().begin_backdated(name, step, start_ns, kind);
}

void TraceSession::record_op(SpanId span, const OpRecord& op) {
  detail::SessionState& s = state();
  const std::uint64_t timestamp =
      op.timestamp_ns != 0 ? op.timestamp_ns : s.elapsed_ns();  // trace6.md §17.7
  const std::uint64_t bytes = detail::resolve_record_bytes(op.storage_bytes, op.shape, op.dtype);
  s.append_record(detail::format_op_line(span.number(), op, timestamp, bytes), span.number());
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
  e.storage_bytes = detail::resolve_record_bytes(t.storage_bytes, t.shape, t.dtype);
  e.category = t.category;
  s.append_record(detail::format_line(e), span.number());
}

void TraceSession::record_memory_alloc(SpanId span, const MemoryRecord& m) {
  detail::SessionState& s = state();
  char id_buf[24];
  const auto id = detail::format_span_id(span.number(), id_buf);
  s.append_record(detail::format_line(memory_event(s, id, m, MemoryAction::alloc)), span.number());
}

void TraceSession::record_memory_free(SpanId span, const MemoryRecord& m) {
  detail::SessionState& s = state();
  char id_buf[24];
  const auto id = detail::format_span_id(span.number(), id_buf);
  s.append_record(detail::format_line(memory_event(s, id, m, MemoryAction::free)), span.number());
}

void TraceSession::record_device_memory(std::string_view device, std::uint64_t used_bytes,
                                        std::uint64_t free_bytes,
                                        std::optional<std::uint64_t> timestamp_ns,
                                        std::optional<std::uint64_t> reserved_bytes) {
  detail::SessionState& s = state();
  const DeviceMemoryEvent e{timestamp_ns ? *timestamp_ns : s.elapsed_ns(), device, used_bytes,
                            free_bytes, reserved_bytes};
  s.append_record(detail::format_line(e), 1);  // not tied to a span; 1 always exists
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
  s.append_record(detail::format_line(e), 1);
  return n;
}

void TraceSession::record_edge(SpanId from, SpanId to, std::uint64_t duration_ns) {
  detail::SessionState& s = state();
  char from_buf[24];
  char to_buf[24];
  const EdgeEvent e{detail::format_span_id(from.number(), from_buf),
                    detail::format_span_id(to.number(), to_buf), duration_ns};
  s.append_record(detail::format_line(e), from.number(),
                  to.number());  // both ends must be spans of this session
}

void TraceSession::set_final_tag(std::string_view key, std::string_view value) {
  state().set_final_tag(key, value);
}

std::uint64_t TraceSession::elapsed_ns() const {
  return state().elapsed_ns();
}

TraceSession::CurrentSpan TraceSession::current_span() const {
  return state().current_span();
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
