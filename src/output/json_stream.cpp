#include "output/json_stream.hpp"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cstring>

#include "output/copy_short.hpp"
#include "output/decimal.hpp"
#include "output/json_text.hpp"

namespace candle_graph::output {

bool JsonStream::is_schema_key(std::string_view k) noexcept {
  return std::all_of(k.begin(), k.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

JsonStream::JsonStream(Sink sink, JsonStyle style, std::size_t flush_at)
    : sink_(std::move(sink)),
      flush_at_(std::max<std::size_t>(flush_at, 16)),
      compact_(style == JsonStyle::compact),
      pretty_mask_(compact_ ? 0 : ~std::size_t{0}) {
  // With a sink the buffer is flushed whenever it is full; without, it grows (take()).
  buf_.resize(sink_ ? flush_at_ : 4096);
}

void JsonStream::pass_on() {
  if (handover_) {
    handover_(buf_, len_);
    // A buffer that comes back smaller (a first spare is empty) is sized once; afterwards the
    // same few buffers circulate, written over through the cursor without being cleared.
    if (buf_.size() < flush_at_) buf_.resize(flush_at_);
  } else {
    sink_(std::string_view(buf_.data(), len_));
  }
  len_ = 0;
}

void JsonStream::make_room(std::size_t n) {
  if (sink_ && len_ > 0) pass_on();
  if (len_ + n > buf_.size()) buf_.resize(std::max(len_ + n, 2 * buf_.size()));
}

void JsonStream::newline_indent() {
  if (compact_) return;
  const std::size_t width = 2 * stack_.size();
  if (width + 1 <= kNewlineIndent.size()) {
    reserve(kNewlineIndent.size());
    // A fixed-size copy (a few vector stores) instead of a memcpy call; only width + 1 count.
    std::memcpy(cursor(), kNewlineIndent.data(), kNewlineIndent.size());
    len_ += width + 1;
    return;
  }
  reserve(width + 1);
  put('\n');
  std::memset(cursor(), ' ', width);
  len_ += width;
}

void JsonStream::next_line(std::size_t extra) {
  Level& l = stack_.back();
  const std::size_t width = 2 * stack_.size();
  if (width + 1 > kNewlineIndent.size()) {  // deeper than the cached indentation
    if (!l.empty) {
      reserve(1);
      put(',');
    }
    l.empty = false;
    newline_indent();
    reserve(extra);
    return;
  }
  // One capacity check for the comma, the line break, the indentation and `extra` bytes.
  reserve(1 + kNewlineIndent.size() + extra);
  len_ = static_cast<std::size_t>(member_break(cursor(), width) - buf_.data());
}

void JsonStream::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (stack_.empty()) return;  // the top-level value
  next_line(0);
}

JsonStream& JsonStream::key(std::string_view k) {
  next_line(0);
  reserve(6 * k.size() + 4);
  char* out = write_json_string(cursor(), k);
  out[0] = ':';
  out[1] = ' ';
  len_ = static_cast<std::size_t>(out + (compact_ ? 1 : 2) - buf_.data());
  after_key_ = true;
  return *this;
}

JsonStream& JsonStream::schema_key_slow(std::string_view k) {
  assert(is_schema_key(k));
  next_line(k.size() + 4);
  char* out = cursor();
  out[0] = '"';
  copy_short(out + 1, k.data(), k.size());
  std::memcpy(out + 1 + k.size(), "\": ", 3);
  len_ += k.size() + (compact_ ? 3 : 4);
  after_key_ = true;
  return *this;
}

JsonStream& JsonStream::open_slow(char bracket, bool array) {
  before_value();
  reserve(1);
  put(bracket);
  stack_.push_back({array, true});
  return *this;
}

JsonStream& JsonStream::begin_array() {
  return open_slow('[', true);
}

void JsonStream::close(char bracket) {
  const bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty) newline_indent();
  reserve(1);
  put(bracket);
}

JsonStream& JsonStream::end_array() {
  close(']');
  return *this;
}

JsonStream& JsonStream::string_slow(std::string_view s) {
  std::string shortened;
  if (s.size() > shorten_over_ && shorten_) {
    shortened = shorten_(s);
    assert(shortened.size() <= shorten_over_);
    s = shortened;
  }
  before_value();
  reserve(6 * s.size() + 2);
  len_ = static_cast<std::size_t>(write_json_string(cursor(), s) - buf_.data());
  return *this;
}

JsonStream& JsonStream::u64_slow(std::uint64_t v) {
  before_value();
  reserve(24);
  len_ = static_cast<std::size_t>(write_decimal(cursor(), v) - buf_.data());
  return *this;
}

JsonStream& JsonStream::i64(std::int64_t v) {
  before_value();
  reserve(24);
  len_ = static_cast<std::size_t>(std::to_chars(cursor(), cursor() + 24, v).ptr - buf_.data());
  return *this;
}

JsonStream& JsonStream::f64(double v) {
  before_value();
  std::string text;
  append_f64(text, v);
  raw(text);
  return *this;
}

JsonStream& JsonStream::boolean(bool v) {
  before_value();
  raw(v ? "true" : "false");
  return *this;
}

JsonStream& JsonStream::null() {
  before_value();
  raw("null");
  return *this;
}

void JsonStream::raw(std::string_view text) {
  reserve(text.size());
  std::memcpy(cursor(), text.data(), text.size());
  len_ += text.size();
}

JsonStream& JsonStream::raw_value(std::string_view json) {
  before_value();
  raw(json);
  return *this;
}

void JsonStream::finish() {
  reserve(1);
  put('\n');
  if (sink_) pass_on();
}

JsonStream JsonStream::fragment(std::string buffer, bool after_element) const {
  JsonStream f({}, compact_ ? JsonStyle::compact : JsonStyle::pretty, flush_at_);
  if (buffer.size() > f.buf_.size()) f.buf_ = std::move(buffer);
  f.stack_ = stack_;
  if (after_element && !f.stack_.empty()) f.stack_.back().empty = false;
  f.shorten_over_ = shorten_over_;
  f.shorten_ = shorten_;
  return f;
}

void JsonStream::append_fragment(JsonStream& fragment) {
  assert(!after_key_ && fragment.stack_.size() == stack_.size() && !fragment.after_key_);
  if (fragment.len_ == 0) return;
  if (!stack_.empty()) stack_.back().empty = false;
  const std::string_view text(fragment.buf_.data(), fragment.len_);
  if (!sink_) {
    raw(text);
  } else {
    // Whole, after what this stream holds: a fragment is a batch of elements (about half a MB),
    // and the writing thread takes it without a copy.
    if (len_ > 0) pass_on();
    if (handover_)
      handover_(fragment.buf_, fragment.len_);
    else
      sink_(text);
  }
  fragment.len_ = 0;
}

std::string JsonStream::take() {
  buf_.resize(len_);
  len_ = 0;
  return std::move(buf_);
}

}  // namespace candle_graph::output
