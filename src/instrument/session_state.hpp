// The shared state behind a TraceSession: span numbering, per-thread span stacks, the measured
// region, misuse bookkeeping and the trace file. Every member is guarded by `mu`, which is held
// only to append already formatted lines and to update span bookkeeping.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "candle_graph/instrument.hpp"
#include "instrument/clock.hpp"
#include "instrument/line_sink.hpp"
#include "instrument/spin_lock.hpp"

namespace candle_graph::detail {

// trace6.md §4.12 resolve_storage_bytes with a fast path for exact dtype labels
// (trace_session.cpp).
std::uint64_t resolve_record_bytes(std::optional<std::uint64_t> explicit_bytes,
                                   std::span<const std::uint64_t> shape,
                                   std::string_view dtype) noexcept;

// One thread's open spans in this session, innermost last.
struct ThreadSpans {
  std::vector<std::uint64_t> stack;
  std::vector<std::optional<ExecutionStep>> steps;  // parallel to stack (current_span)
};

class SessionState {
 public:
  SessionState(const std::filesystem::path& path, const ProfileRun& run);

  SpanGuard begin(std::string_view name, SpanKind kind, bool measured,
                  std::optional<ExecutionStep> step);
  // A step span started at `start_ns` (session time), which must not be in the future
  // (TraceSession::begin_step_span_at).
  SpanGuard begin_backdated(std::string_view name, ExecutionStep step, std::uint64_t start_ns,
                            SpanKind kind);
  // Ends the guard's span; see SpanGuard::end and ~SpanGuard for the misuse rules. Returns true
  // when the caller must delete this state (the owning TraceSession is gone and this was the
  // last live guard).
  bool end(SpanGuard& guard, bool from_destructor);

  // Appends one formatted record line (ending in '\n') after checking that the spans it refers
  // to exist in this session.
  void append_record(std::string_view line, std::uint64_t span, std::uint64_t other_span = 1);
  std::uint64_t next_gradient_number();
  TraceSession::CurrentSpan current_span();

  std::uint64_t elapsed_ns() const noexcept {
    return static_cast<std::uint64_t>(now_tick() - origin_tick_);
  }
  std::uint64_t elapsed_at(std::int64_t tick) const noexcept {
    return static_cast<std::uint64_t>(tick - origin_tick_);
  }
  const std::filesystem::path& path() const noexcept { return sink_.path(); }
  bool finished();
  void flush();
  void set_final_tag(std::string_view key, std::string_view value);
  std::filesystem::path finish();
  // Called by ~TraceSession after finish(): returns true when the state can be deleted now,
  // false when live guards still point at it (the last one deletes it).
  bool release_owner();

 private:
  ThreadSpans& this_thread_spans();                                      // needs mu
  void check_open() const;                                               // needs mu
  void write_span_end(std::uint64_t number, std::uint64_t duration_ns);  // needs mu
  void defer_error(const std::string& message);                          // needs mu
  // The meta line with the opening tags and `extra` over them (trace6.md §4.2), without '\n'.
  std::string meta_line(const std::map<std::string, std::string, std::less<>>& extra) const;
  void rewrite_meta_with_final_tags();  // needs mu, before the sink closes
  // begin() with the start tick given (now, or a backdated one already checked).
  SpanGuard begin_at(std::string_view name, SpanKind kind, bool measured,
                     std::optional<ExecutionStep> step, std::int64_t tick);

  mutable SpinLock mu_;
  LineSink sink_;
  std::int64_t origin_tick_;
  const std::uint64_t serial_;   // distinguishes sessions in the per-thread cache
  std::uint64_t next_span_ = 2;  // s1 is the envelope
  std::uint64_t measured_ = 0;   // number of the measured region, 0 before it begins
  bool measured_open_ = false;
  std::uint64_t gradients_ = 0;
  bool finished_ = false;
  std::uint64_t live_guards_ = 0;
  bool owner_gone_ = false;
  std::string deferred_error_;  // misuse seen where throwing was impossible (destructors)
  // What the meta line was written from, kept for the rewrite with the final tags.
  ProfileRun::Fields run_;
  std::string run_id_;
  std::string timestamp_;
  std::size_t meta_bytes_ = 0;  // the meta line's length on disk with its padding, without '\n'
  std::map<std::string, std::string, std::less<>> final_tags_;
  std::unordered_map<std::uint64_t, std::unique_ptr<ThreadSpans>> threads_;  // by thread serial
};

}  // namespace candle_graph::detail
