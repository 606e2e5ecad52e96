// trace6.md §13.2 session mechanics: the meta + envelope preamble, span numbering and nesting with
// per-thread stacks, the single measured region, and finish.
#include "instrument/session_state.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>

#include "instrument/event_line.hpp"
#include "instrument/run_identity.hpp"

namespace candle_graph::detail {
namespace {

std::atomic<std::uint64_t> g_next_session_serial{1};
std::atomic<std::uint64_t> g_next_thread_serial{1};

// The last session this thread used: a hit skips the registry lookup (trivial type, so the
// access needs no TLS initialisation guard).
struct ThreadCache {
  std::uint64_t session_serial = 0;
  ThreadSpans* spans = nullptr;
};
thread_local ThreadCache tl_cache;

std::uint64_t this_thread_serial() {
  // Unique per thread for the life of the process (std::thread::id values are reused).
  thread_local const std::uint64_t serial = g_next_thread_serial.fetch_add(1);
  return serial;
}

std::string tick_quote(std::uint64_t n) {
  return "`s" + std::to_string(n) + "`";
}

// trace6.md §17.7: capture_step is one-based; checked before anything is created.
const std::filesystem::path& checked(const std::filesystem::path& path, const ProfileRun& run) {
  if (run.fields().capture_step == 0)
    throw InstrumentError(path,
                          "capture_step must be one-based and greater than zero (the first "
                          "update or inference call is step 1)");
  return path;
}

}  // namespace

SessionState::SessionState(const std::filesystem::path& path, const ProfileRun& run)
    : sink_(checked(path, run)),
      origin_tick_(now_tick()),
      serial_(g_next_session_serial.fetch_add(1)),
      run_(run.fields()) {
  const auto wall = std::chrono::system_clock::now();
  run_id_ = make_run_id(wall);
  timestamp_ = format_utc_timestamp(wall);
  try {
    std::string line = meta_line({});
    line.append(run_.final_tag_room, ' ');  // room for the final tags (trace6.md §4.1 trims it)
    meta_bytes_ = line.size();
    line.push_back('\n');
    sink_.append(line);
    // trace6.md §13.2: the envelope root, never measured, open until finish().
    line.clear();
    append_event_json(line, TraceEvent(SpanStartEvent{"s1", std::nullopt, run_.entrypoint, 0,
                                                      SpanKind::function, false, std::nullopt}));
    line.push_back('\n');
    sink_.append(line);
    sink_.flush();  // a file that exists always parses
  } catch (...) {
    sink_.discard();
    throw;
  }
}

std::string SessionState::meta_line(
    const std::map<std::string, std::string, std::less<>>& extra) const {
  std::map<std::string_view, std::string_view> merged;
  for (const auto& [key, value] : run_.tags) merged[key] = value;
  for (const auto& [key, value] : extra) merged[key] = value;
  std::vector<Tag> tags;
  tags.reserve(merged.size());
  for (const auto& [key, value] : merged) tags.push_back(Tag{key, value});

  TraceRunMeta meta;
  meta.run_id = run_id_;
  meta.correlation_id = run_.correlation_id;
  meta.entrypoint = run_.entrypoint;
  meta.phase = run_.phase;
  meta.timestamp = timestamp_;
  meta.capture_step = run_.capture_step;
  meta.warmup_steps = run_.warmup_steps;
  meta.device = run_.device;
  meta.measured_region_device_synchronized = run_.measured_region_device_synchronized;
  meta.timing_mode = run_.timing_mode;
  meta.tags = tags;
  std::string line;
  append_event_json(line, TraceEvent(MetaEvent{kTraceSchema, meta}));
  return line;
}

void SessionState::set_final_tag(std::string_view key, std::string_view value) {
  std::lock_guard lock(mu_);
  check_open();
  final_tags_.insert_or_assign(std::string(key), std::string(value));
}

void SessionState::rewrite_meta_with_final_tags() {
  if (final_tags_.empty()) return;
  std::string line = meta_line(final_tags_);
  if (line.size() > meta_bytes_) {
    defer_error("the final meta tags need " + std::to_string(line.size()) +
                " bytes but the meta line has " + std::to_string(meta_bytes_) +
                " (reserve more with ProfileRun::final_tag_room); they were not written");
    return;
  }
  line.append(meta_bytes_ - line.size(), ' ');  // same length: no other line moves
  sink_.overwrite_start(line);
}

ThreadSpans& SessionState::this_thread_spans() {
  if (tl_cache.session_serial == serial_) [[likely]]
    return *tl_cache.spans;
  auto& slot = threads_[this_thread_serial()];
  if (!slot) {
    slot = std::make_unique<ThreadSpans>();
    slot->stack.reserve(64);  // pushes stay allocation-free for realistic nesting depths
    slot->steps.reserve(64);
  }
  tl_cache = ThreadCache{serial_, slot.get()};
  return *slot;
}

void SessionState::check_open() const {
  if (finished_)
    throw InstrumentError(sink_.path(),
                          "the session is finished; record events and begin spans before "
                          "finish() (or open a new TraceSession)");
}

SpanGuard SessionState::begin(std::string_view name, SpanKind kind, bool measured,
                              std::optional<ExecutionStep> step) {
  return begin_at(name, kind, measured, step, now_tick());
}

SpanGuard SessionState::begin_backdated(std::string_view name, ExecutionStep step,
                                        std::uint64_t start_ns, SpanKind kind) {
  const std::uint64_t now_ns = elapsed_at(now_tick());
  if (start_ns > now_ns)
    throw InstrumentError(
        sink_.path(), "span `" + std::string(name) + "` would start at " +
                          std::to_string(start_ns) + " ns, after the session's clock now (" +
                          std::to_string(now_ns) + " ns); a backdated span must start in the past");
  return begin_at(name, kind, false, step, origin_tick_ + static_cast<std::int64_t>(start_ns));
}

SpanGuard SessionState::begin_at(std::string_view name, SpanKind kind, bool measured,
                                 std::optional<ExecutionStep> step, std::int64_t tick) {
  std::lock_guard lock(mu_);
  check_open();
  if (measured && measured_ != 0)
    throw InstrumentError(sink_.path(),
                          "begin_measurement was already called (measured region " +
                              tick_quote(measured_) +
                              "); a session has exactly one measured region, use begin_span or "
                              "begin_step_span for the regions inside it");
  ThreadSpans& spans = this_thread_spans();
  // Innermost open span of this thread; a thread with none attaches to the measured region
  // while it is open, else to the envelope.
  const std::uint64_t parent =
      !spans.stack.empty() ? spans.stack.back() : (measured_open_ ? measured_ : 1);
  const std::uint64_t number = next_span_;
  sink_.append(
      format_span_start_line(number, parent, name, elapsed_at(tick), kind, measured, step));
  ++next_span_;
  if (measured) {
    measured_ = number;
    measured_open_ = true;
    sink_.flush();  // the region's start reaches the file even if the process dies in it
  }
  // Only after the writes succeeded: a failed write leaves no guard behind.
  spans.stack.push_back(number);
  spans.steps.push_back(step);
  ++live_guards_;
  return SpanGuard(this, &spans, number, tick);
}

void SessionState::write_span_end(std::uint64_t number, std::uint64_t duration_ns) {
  sink_.append(format_span_end_line(number, duration_ns));
}

void SessionState::defer_error(const std::string& message) {
  deferred_error_ += (deferred_error_.empty() ? "" : "; ") + message;
}

bool SessionState::end(SpanGuard& guard, bool from_destructor) {
  const std::int64_t tick = now_tick();
  std::unique_lock lock(mu_);
  const std::uint64_t number = guard.number_;
  auto deactivate = [&] {
    guard.session_ = nullptr;
    --live_guards_;
    return owner_gone_ && live_guards_ == 0;
  };
  if (finished_) {
    const bool last = deactivate();
    if (from_destructor) return last;
    const std::filesystem::path path = sink_.path();
    lock.unlock();
    if (last) delete this;  // nobody else can reach the state any more
    throw InstrumentError(path, "span " + tick_quote(number) +
                                    " ended after the session finished; end every SpanGuard "
                                    "before finish() (the span stays unclosed in the trace)");
  }
  std::vector<std::uint64_t>& stack = guard.origin_->stack;
  if (stack.empty() || stack.back() != number) {
    const auto it = std::find(stack.begin(), stack.end(), number);
    const std::string inner = it == stack.end() || it + 1 == stack.end()
                                  ? std::string("another span")
                                  : tick_quote(*(it + 1));
    std::string message = "span " + tick_quote(number) + " was ended while " + inner +
                          ", begun after it on the same thread, was still open; end SpanGuards "
                          "in reverse order of creation";
    if (!from_destructor) throw InstrumentError(sink_.path(), std::move(message));
    // A destructor cannot throw: leave the span unclosed (health open_span), drop it from the
    // stack so later spans do not nest under it, and let finish() report the misuse.
    if (it != stack.end()) {
      std::vector<std::optional<ExecutionStep>>& steps = guard.origin_->steps;
      steps.erase(steps.begin() + (it - stack.begin()));
      stack.erase(it);
    }
    defer_error(std::move(message) + " (it stays unclosed in the trace)");
    return deactivate();
  }
  write_span_end(number, static_cast<std::uint64_t>(tick - guard.start_tick_));
  stack.pop_back();
  guard.origin_->steps.pop_back();
  const bool last = deactivate();  // bookkeeping first: a write error below leaves it sound
  if (number == measured_) {
    measured_open_ = false;
    sink_.flush();  // the whole measured region reaches the file as soon as it is complete
  }
  return last;
}

void SessionState::append_record(std::string_view line, std::uint64_t span,
                                 std::uint64_t other_span) {
  std::lock_guard lock(mu_);
  check_open();
  if (other_span == 0 || other_span >= next_span_) span = other_span;
  if (span == 0 || span >= next_span_)
    throw InstrumentError(sink_.path(), "span " + tick_quote(span) +
                                            " does not exist in this session; pass the id() "
                                            "of one of its SpanGuards or envelope()");
  sink_.append(line);
}

std::uint64_t SessionState::next_gradient_number() {
  std::lock_guard lock(mu_);
  check_open();
  return ++gradients_;
}

TraceSession::CurrentSpan SessionState::current_span() {
  std::lock_guard lock(mu_);
  const ThreadSpans& spans = this_thread_spans();
  TraceSession::CurrentSpan out{
      SpanId(!spans.stack.empty() ? spans.stack.back() : (measured_open_ ? measured_ : 1)),
      std::nullopt};
  for (auto it = spans.steps.rbegin(); it != spans.steps.rend() && !out.step; ++it) out.step = *it;
  return out;
}

bool SessionState::finished() {
  std::lock_guard lock(mu_);
  return finished_;
}

void SessionState::flush() {
  std::lock_guard lock(mu_);
  if (!finished_) sink_.flush();
}

std::filesystem::path SessionState::finish() {
  std::lock_guard lock(mu_);
  if (finished_) return sink_.path();
  finished_ = true;
  write_span_end(1, elapsed_ns());
  rewrite_meta_with_final_tags();
  sink_.close();
  std::string open;
  for (const auto& [thread, spans] : threads_)
    for (std::uint64_t n : spans->stack) open += (open.empty() ? "" : ", ") + tick_quote(n);
  if (!open.empty())
    defer_error("finish() was called while span(s) " + open +
                " were still open; they stay unclosed in the trace (end every SpanGuard before "
                "finish())");
  if (!deferred_error_.empty())
    throw InstrumentError(sink_.path(),
                          "the trace was written but is not trusted: " + deferred_error_);
  return sink_.path();
}

bool SessionState::release_owner() {
  std::lock_guard lock(mu_);
  owner_gone_ = true;
  return live_guards_ == 0;
}

}  // namespace candle_graph::detail
