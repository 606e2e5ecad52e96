#include "export/chrome_json.hpp"

#include <charconv>
#include <cmath>
#include <utility>

#include "output/json_text.hpp"

namespace candle_graph::exporting {

namespace {

// The text of k / 10^places (k < 10^15) in ryu's decimal layout: the integer part, the point,
// then the fraction without trailing zeros (`.0` when there is none).
char* write_scaled(char* out, std::uint64_t k, std::uint64_t scale, int places) noexcept {
  out = std::to_chars(out, out + 20, k / scale).ptr;
  *out++ = '.';
  std::uint64_t frac = k % scale;
  if (frac == 0) {
    *out++ = '0';
    return out;
  }
  while (frac % 10 == 0) {
    frac /= 10;
    --places;
  }
  for (int i = places - 1; i >= 0; --i) {
    out[i] = static_cast<char>('0' + frac % 10);
    frac /= 10;
  }
  return out + places;
}

// When v is the double nearest to k / scale for an integer k < 10^15, writes that decimal.
char* try_scale(char* out, double v, double scale, std::uint64_t iscale, int places) noexcept {
  if (v >= 1e15 / scale) return nullptr;
  const double scaled = v * scale;
  auto k = static_cast<std::uint64_t>(scaled);  // the nearest integer: the check below decides
  if (scaled - static_cast<double>(k) >= 0.5) ++k;
  // k < 10^15 < 2^53: k is exact as a double and the division rounds once, to the double
  // nearest k / scale; `v` must be that double, or its text is not k's digits.
  if (static_cast<double>(k) / scale != v) return nullptr;
  return write_scaled(out, k, iscale, places);
}

}  // namespace

char* write_us_fast(char* out, double v) noexcept {
  if (!(v >= 0) || (v == 0 && std::signbit(v))) return nullptr;
  if (char* end = try_scale(out, v, 1e3, 1000, 3)) return end;
  return try_scale(out, v, 1e4, 10000, 4);  // midpoints of ns / 1000 values (flow bind points)
}

ChromeJson::ChromeJson(Sink sink, bool after_element, char* piece_buffer)
    : sink_(std::move(sink)),
      storage_(piece_buffer == nullptr ? new char[kPiece] : nullptr),
      first_(!after_element) {
  buf_ = at_ = piece_buffer == nullptr ? storage_.get() : piece_buffer;
  end_ = buf_ + kPiece;
}

void ChromeJson::str(std::string_view s) {
  if (s.size() > kLargeValue) {
    scratch_.clear();
    output::append_json_string(scratch_, s);
    return pass_large(scratch_);
  }
  room(6 * s.size() + 2);  // write_json_string's worst case: every byte a control character
  at_ = output::write_json_string(at_, s);
}

void ChromeJson::u64(std::uint64_t v) {
  room(20);
  if (v < 10) {  // pids, tids, most dimensions
    *at_++ = static_cast<char>('0' + v);
    return;
  }
  at_ = std::to_chars(at_, at_ + 20, v).ptr;
}

void ChromeJson::f64(double v) {
  room(20);
  if (char* end = write_us_fast(at_, v)) {
    at_ = end;
    return;
  }
  raw(f64_text(v));
}

std::string_view ChromeJson::f64_text(double v) {
  if (const char* end = write_us_fast(number_, v))
    return {number_, static_cast<std::size_t>(end - number_)};
  scratch_.clear();
  output::append_f64(scratch_, v);
  return scratch_;
}

void ChromeJson::flush() {
  if (at_ == buf_) return;
  const std::string_view piece(buf_, static_cast<std::size_t>(at_ - buf_));
  flushed_ += piece.size();
  at_ = buf_;
  sink_(piece);
}

void ChromeJson::hand_over(std::string& text) {
  flush();
  flushed_ += text.size();
  if (handover_) {
    handover_(text);
  } else {
    sink_(text);
  }
  text.clear();
}

void ChromeJson::pass_large(std::string_view text) {
  flush();
  flushed_ += text.size();
  sink_(text);
}

}  // namespace candle_graph::exporting
