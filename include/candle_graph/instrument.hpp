// The producer API (trace6.md §13, §17.7): how a C++ program records one selected training update
// or inference call as a candle-graph/trace/6 JSONL file.
//
//   candle_graph::CaptureSelector selector = candle_graph::CaptureSelector::at_step(3);
//   for (...) {                                   // the training loop
//     if (!selector.tick()) { train_step(); continue; }    // unselected: nothing is allocated
//     candle_graph::TraceSession session("trace.jsonl",
//         candle_graph::ProfileRun::training("mlp::train_step", selector.step(), "cpu"));
//     auto update = session.begin_measurement("mlp/update-000000000003");
//     train_step(session);                        // begin_step_span(...), record_op(...), ...
//   }                                             // guards end, then the session finishes
//
// Only the standard library and the std-only public headers trace_events.hpp / error.hpp are
// included.
//
// Threads: every member of TraceSession may be called from any thread. Each thread has its own
// span stack; a span begun on a thread with no open span of its own attaches to the measured
// region while it is open (to the envelope `s1` otherwise). Every event is one whole line, lines
// never interleave, and span_start always precedes its span_end in the file. Note that trace/6
// health checks `children_exceed_parent` by summing child durations, so spans running in parallel
// under one parent can make a trace untrusted even though every line is correct.
//
// Crash safety: events are formatted into a per-thread buffer, appended to a session buffer of
// whole lines, and written out at line boundaries (when 256 KiB accumulate, at flush(), when the
// measured region begins and ends, and at finish()). A process killed mid-capture therefore
// leaves a file that parses; the spans still open show up as health `open_span`. Buffered
// events not yet written are lost with the process (call flush() to bound that loss).
//
// Errors: misuse and I/O failures throw InstrumentError; its message says what to do. No misuse
// leaves a partial line in the file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "candle_graph/error.hpp"
#include "candle_graph/trace_events.hpp"  // the trace/6 vocabulary and events (std only)

namespace candle_graph {

// The one exception type of the instrumentation API. path() is the trace file (empty before a
// path is known), line() is always 0; message() says what went wrong and what to do about it.
class InstrumentError : public Error {
 public:
  InstrumentError(const std::filesystem::path& trace, std::string message)
      : Error(trace.string(), 0, std::move(message)) {}
};

// ---- CaptureSelector: is this invocation the one to capture? -----------------------------------

// Decides per invocation (update or inference call) whether to capture it. A plain value with
// no allocation; tick() is one increment, one compare and a well-predicted branch. Not thread-safe:
// keep one selector per loop. Steps are one-based, like ProfileRun's capture_step.
class CaptureSelector {
 public:
  // Captures exactly invocation `step` (one-based; 0 never captures).
  static constexpr CaptureSelector at_step(std::uint64_t step) noexcept {
    return CaptureSelector(step, 0);
  }
  // Captures invocations first, first + period, first + 2·period, … (first defaults to period,
  // so every(100) captures steps 100, 200, …). period 0 captures only `first`.
  static constexpr CaptureSelector every(std::uint64_t period, std::uint64_t first = 0) noexcept {
    return CaptureSelector(first == 0 ? period : first, period);
  }
  // Never captures (e.g. profiling switched off by configuration).
  static constexpr CaptureSelector never() noexcept { return CaptureSelector(0, 0); }

  // Advances to the next invocation and returns whether it is selected. The invocation's
  // one-based number is then step(). One increment and one compare on the unselected path.
  constexpr bool tick() noexcept {
    if (++step_ != next_) [[likely]]
      return false;
    next_ = period_ == 0 ? 0 : step_ + period_;
    return true;
  }
  // Number of the current invocation (the last tick()); 0 before the first tick().
  constexpr std::uint64_t step() const noexcept { return step_; }

  // Stateless form for callers that count steps themselves: is invocation `step` selected?
  constexpr bool selects(std::uint64_t step) const noexcept {
    if (first_ == 0 || step < first_) return false;
    if (period_ == 0) return step == first_;
    return (step - first_) % period_ == 0;
  }

 private:
  constexpr CaptureSelector(std::uint64_t first, std::uint64_t period) noexcept
      : first_(first), period_(period), next_(first) {}

  std::uint64_t first_;
  std::uint64_t period_;
  std::uint64_t next_;  // number of the next selected invocation; 0 = none
  std::uint64_t step_ = 0;
};

// ---- ProfileRun: the provenance written into the meta line (trace6.md §4.2, §13.1)
// -----------------------

class ProfileRun {
 public:
  struct Fields {
    std::string entrypoint;
    std::string correlation_id;
    ExecutionPhase phase = ExecutionPhase::train;
    std::uint64_t capture_step = 1;
    std::uint64_t warmup_steps = 0;
    std::string device;
    bool measured_region_device_synchronized = false;
    TimingMode timing_mode = TimingMode::host;
    std::map<std::string, std::string, std::less<>> tags;  // sorted, as on the wire
    // Bytes of padding kept after the meta line so that TraceSession::set_final_tag can add tags
    // known only at the end (trace6.md §4.1: lines are trimmed, so the padding is invisible).
    std::size_t final_tag_room = 0;
  };

  // trace6.md §13.1: phase train, correlation id `{entrypoint}/update-{capture_step}`, warmup_steps
  // = capture_step − 1 (saturating), timing host, flag false, no tags. capture_step is checked (≥
  // 1) when the session opens.
  static ProfileRun training(std::string_view entrypoint, std::uint64_t capture_step,
                             std::string_view device);
  // Same with phase infer and correlation id `{entrypoint}/inference-{capture_step}`.
  static ProfileRun inference(std::string_view entrypoint, std::uint64_t capture_step,
                              std::string_view device);

  // Adds (or replaces) a provenance tag such as batch size, precision or source revision.
  ProfileRun& tag(std::string_view key, std::string_view value) &;
  ProfileRun&& tag(std::string_view key, std::string_view value) &&;
  // Reserves `bytes` in the meta line for tags added by TraceSession::set_final_tag.
  ProfileRun& final_tag_room(std::size_t bytes) &;
  ProfileRun&& final_tag_room(std::size_t bytes) &&;
  // Overrides the correlation id shared with NVTX labels and external artifacts.
  ProfileRun& correlation_id(std::string_view value) &;
  ProfileRun&& correlation_id(std::string_view value) &&;
  // trace6.md §17.6: timing mode device_synchronized AND the measured-region flag. Use only when
  // every semantic span is individually synchronised with the device.
  ProfileRun& device_synchronized() &;
  ProfileRun&& device_synchronized() &&;
  // trace6.md §17.6: only the flag (the measured region is bounded by device synchronisations);
  // timing mode stays host, so nested spans are not presented as completed GPU work.
  ProfileRun& measured_region_device_synchronized() &;
  ProfileRun&& measured_region_device_synchronized() &&;

  const Fields& fields() const noexcept { return fields_; }

 private:
  ProfileRun(std::string_view entrypoint, std::uint64_t capture_step, std::string_view device,
             ExecutionPhase phase);
  Fields fields_;
};

// ---- Records: views of caller data; nothing is copied until the line is formatted --------------
// Every member has an initializer so designated initializers may omit any of them without
// tripping -Wmissing-field-initializers (GCC 12 warns otherwise under -Wextra).

// Span ids are `s1`, `s2`, … in the order spans begin; `s1` is the session's envelope.
class SpanId {
 public:
  constexpr SpanId() noexcept = default;
  constexpr explicit SpanId(std::uint64_t number) noexcept : number_(number) {}
  constexpr std::uint64_t number() const noexcept { return number_; }
  std::string str() const { return "s" + std::to_string(number_); }
  friend constexpr bool operator==(SpanId, SpanId) noexcept = default;

 private:
  std::uint64_t number_ = 0;
};

// trace6.md §4.5 `op`. storage_bytes is resolved from shape × dtype when absent (§4.12).
struct OpRecord {
  std::string_view op_name{};
  std::span<const std::string_view> inputs{};
  std::optional<std::string_view> output{};
  std::span<const std::uint64_t> shape{};
  std::string_view dtype{};
  std::string_view device{};
  std::uint64_t duration_ns = 0;
  std::uint64_t timestamp_ns = 0;  // 0 means "now" (trace6.md §17.7: the current elapsed time)
  std::optional<std::uint64_t> storage_bytes{};
  std::uint64_t input_storage_bytes = 0;
  // trace6.md §4.5.1: the op's inclusive time when other recorded ops ran inside it (duration_ns
  // is then its exclusive time), and the host thread it ran on when a trace has several.
  std::optional<std::uint64_t> total_ns{};
  std::optional<std::uint64_t> thread{};
};

// trace6.md §4.6 `tensor`. storage_bytes is resolved from shape × dtype when absent.
struct TensorRecord {
  std::string_view tensor_id{};
  std::span<const std::uint64_t> shape{};
  std::string_view dtype{};
  std::string_view device{};
  bool requires_grad = false;
  std::optional<std::uint64_t> storage_bytes{};
  MemoryCategory category = MemoryCategory::other;
};

// trace6.md §4.7 `memory`. The only events that drive live/peak memory.
struct MemoryRecord {
  std::string_view tensor_id{};
  std::string_view device{};
  std::uint64_t bytes = 0;
  std::string_view dtype{};
  MemoryCategory category = MemoryCategory::other;
  std::optional<std::uint64_t> timestamp_ns{};  // absent means "now"
  std::optional<std::string_view> op_name{};
  std::span<const std::uint64_t> shape{};
};

namespace detail {
class SessionState;
struct ThreadSpans;
}  // namespace detail

// ---- SpanGuard: RAII end of a span ---------------------------------------------------------

// Ends its span (writes `span_end` with the duration since the guard was created) when end() is
// called or when it is destroyed. Movable (also across threads), not copyable. Spans end in
// reverse order of creation on each thread. A guard may outlive finish() and even its
// TraceSession: its span then stays unclosed, end() throws and the destructor stays silent.
class SpanGuard {
 public:
  SpanGuard() noexcept = default;
  SpanGuard(SpanGuard&& other) noexcept;
  SpanGuard& operator=(SpanGuard&& other) noexcept;
  SpanGuard(const SpanGuard&) = delete;
  SpanGuard& operator=(const SpanGuard&) = delete;
  // Ends the span. Misuse cannot throw here: an out-of-order end leaves the span unclosed in
  // the trace (health `open_span`) and finish() reports it.
  ~SpanGuard();

  SpanId id() const noexcept { return SpanId(number_); }
  bool active() const noexcept { return session_ != nullptr; }
  // Nanoseconds since the guard was created.
  std::uint64_t elapsed_ns() const noexcept;
  // Ends the span now. Throws InstrumentError when a span begun later on the same thread is
  // still open (the guard then stays active, so ending the inner span first and retrying
  // works) or when the session has finished. No effect on an inactive guard.
  void end();

 private:
  friend class detail::SessionState;
  SpanGuard(detail::SessionState* session, detail::ThreadSpans* origin, std::uint64_t number,
            std::int64_t start_tick) noexcept
      : session_(session), origin_(origin), number_(number), start_tick_(start_tick) {}
  void release(bool from_destructor);

  detail::SessionState* session_ = nullptr;
  detail::ThreadSpans* origin_ = nullptr;  // the span stack the span was pushed on
  std::uint64_t number_ = 0;
  std::int64_t start_tick_ = 0;  // session-clock nanoseconds at creation
};

// ---- TraceSession: one trace file ------------------------------------------------------------

class TraceSession {
 public:
  // trace6.md §13.2 open: creates parent directories, creates/truncates `path`, writes the `meta`
  // line (fresh run_id `run-{pid}-{unix_nanos}`, UTC timestamp `YYYY-MM-DDTHH:MM:SS.mmmZ`) and the
  // envelope `span_start s1` (named after the entrypoint), and writes them out at once. Throws
  // InstrumentError for capture_step 0 or an unwritable path; nothing is created then.
  //
  // Costs to know about: the session starts one writer thread, which takes each full 256 KiB
  // buffer of lines and write()s it, so the recording thread never waits on the page cache
  // (flush() and finish() write synchronously; a failed background write is thrown by the next
  // record or flush). Timestamps come from the CPU's invariant TSC, calibrated once per process
  // against steady_clock (~2 ms, at the first session) and on its scale; set the environment
  // variable CANDLE_GRAPH_CLOCK=steady to use steady_clock itself.
  TraceSession(const std::filesystem::path& path, const ProfileRun& run);
  static TraceSession open(const std::filesystem::path& path, const ProfileRun& run) {
    return TraceSession(path, run);
  }
  TraceSession(TraceSession&&) noexcept;
  TraceSession& operator=(TraceSession&&) noexcept;
  TraceSession(const TraceSession&) = delete;
  TraceSession& operator=(const TraceSession&) = delete;
  // Runs finish() when it was not called; errors are swallowed (call finish() to see them).
  ~TraceSession();

  // The single measured region (`measured: true`, kind function). Call exactly once.
  SpanGuard begin_measurement(std::string_view name);
  SpanGuard begin_span(std::string_view name, SpanKind kind = SpanKind::function);
  // A span tagged forward / backward / optimizer (trace6.md §4.3 `step`).
  SpanGuard begin_step_span(std::string_view name, ExecutionStep step,
                            SpanKind kind = SpanKind::function);
  // A step span that began earlier, at `start_ns` on this session's clock (the scale of
  // elapsed_ns() and of record timestamps), for callers that recognise a phase only after its
  // first work ran: the LibTorch capture opens its automatic backward span when the autograd
  // engine starts, and backdates it to the implicit gradient's `ones_like`. Throws
  // InstrumentError when start_ns is in the future. The start must not precede the start of the
  // span it nests in; if it does, health reports `child_outside_parent` (the check is not made
  // here, to keep span begin and end free of per-span start bookkeeping).
  SpanGuard begin_step_span_at(std::string_view name, ExecutionStep step, std::uint64_t start_ns,
                               SpanKind kind = SpanKind::function);

  // Each writes exactly one event line and nothing else (trace6.md §17.7: ops and tensors never
  // imply memory events). `span` must be a span of this session (a guard's id() or envelope()).
  void record_op(SpanId span, const OpRecord& op);
  void record_tensor(SpanId span, const TensorRecord& tensor);
  void record_memory_alloc(SpanId span, const MemoryRecord& memory);
  void record_memory_free(SpanId span, const MemoryRecord& memory);
  // trace6.md §4.8 cudaMemGetInfo-style checkpoint; timestamp absent means now. reserved_bytes is
  // an optional extension of the 0.7.0 signature (the wire field exists; 0.7.0 never set it).
  void record_device_memory(std::string_view device, std::uint64_t used_bytes,
                            std::uint64_t free_bytes,
                            std::optional<std::uint64_t> timestamp_ns = std::nullopt,
                            std::optional<std::uint64_t> reserved_bytes = std::nullopt);
  // trace6.md §4.9: event ids gradient-1, gradient-2, …; returns n. A non-finite norm is written as
  // absent (JSON has no NaN; use state non_finite to say so).
  std::uint64_t record_gradient(std::string_view root, std::string_view key, GradientState state,
                                std::optional<double> norm = std::nullopt);
  // trace6.md §4.10 `edge` (an addition: 0.7.0 could read edges but never wrote them).
  void record_edge(SpanId from, SpanId to, std::uint64_t duration_ns);

  SpanId envelope() const noexcept { return SpanId(1); }
  // Where work recorded now on the calling thread belongs, for integrations that attribute
  // events automatically (LibTorch ops): `id` is the innermost span this thread has open, else
  // the measured region while it is open, else the envelope (the parent rule of begin_span);
  // `step` is the step of the innermost open span of this thread that has one.
  struct CurrentSpan {
    SpanId id;
    std::optional<ExecutionStep> step;
  };
  CurrentSpan current_span() const;
  // Nanoseconds since the session opened (the clock of every timestamp in the trace).
  std::uint64_t elapsed_ns() const;
  const std::filesystem::path& path() const;
  bool finished() const;

  // A meta tag whose value is known only when the session ends (a capture's own cost, counted
  // over the events it wrote). finish() rewrites the meta line in place with it, within the room
  // reserved by ProfileRun::final_tag_room; the file's other bytes keep their offsets. A later
  // value for the same key replaces the earlier one; an opening tag of that key is overridden.
  // When the tags do not fit, finish() leaves the meta line as it was and throws InstrumentError
  // after completing the file.
  void set_final_tag(std::string_view key, std::string_view value);
  // Writes every buffered whole line to the file.
  void flush();
  // Writes `span_end s1` (duration = elapsed), writes everything out, closes the file and
  // returns its path. Idempotent. Throws InstrumentError after completing the file when spans
  // were still open or were ended out of order by a destructor: the trace is then valid but
  // untrusted (open_span), and the message names the spans.
  std::filesystem::path finish();

 private:
  detail::SessionState& state() const;
  std::unique_ptr<detail::SessionState> state_;
};

}  // namespace candle_graph
