// SpanGuard: RAII end of a span (trace6.md §13.2).
#include "candle_graph/instrument.hpp"
#include "instrument/session_state.hpp"

namespace candle_graph {

SpanGuard::SpanGuard(SpanGuard&& other) noexcept
    : session_(other.session_),
      origin_(other.origin_),
      number_(other.number_),
      start_tick_(other.start_tick_) {
  other.session_ = nullptr;
}

SpanGuard& SpanGuard::operator=(SpanGuard&& other) noexcept {
  if (this != &other) {
    release(true);
    session_ = other.session_;
    origin_ = other.origin_;
    number_ = other.number_;
    start_tick_ = other.start_tick_;
    other.session_ = nullptr;
  }
  return *this;
}

SpanGuard::~SpanGuard() {
  release(true);
}

std::uint64_t SpanGuard::elapsed_ns() const noexcept {
  return static_cast<std::uint64_t>(detail::now_tick() - start_tick_);
}

void SpanGuard::end() {
  release(false);
}

void SpanGuard::release(bool from_destructor) {
  if (session_ == nullptr) return;
  detail::SessionState* session = session_;
  if (!from_destructor) {
    if (session->end(*this, false)) delete session;
    return;
  }
  try {
    if (session->end(*this, true)) delete session;
  } catch (...) {
    // Only an I/O failure can get here; the session reports it on its next call.
  }
}

}  // namespace candle_graph
