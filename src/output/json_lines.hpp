// Flat JSON objects, one per line, as the elements of an array: the writer for hot paths whose
// keys are fixed (the Chrome Trace Event export writes millions of events with it). Keys are
// schema keys (plain ASCII, copied without escaping); the caller says which member comes first
// (no comma). Numbers and strings go through output/json_text (every control character escaped,
// invalid UTF-8 replaced). The text is flushed to the sink in ~1 MiB pieces.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "output/json_text.hpp"

namespace candle_graph::output {

class JsonLines {
 public:
  using Sink = std::function<void(std::string_view)>;
  static constexpr std::size_t kFlushAt = std::size_t{1} << 20;

  explicit JsonLines(const Sink& sink) : sink_(sink) { buf_.reserve(kFlushAt + (1 << 16)); }

  // Starts the next element: the separator from the previous one (`\n` before the first), `{`
  // and `first`, the JSON text of the object's first member (`"ph":"X"`).
  void begin(std::string_view first) {
    buf_ += first_ ? "\n{" : ",\n{";
    first_ = false;
    buf_ += first;
  }
  void end() {
    buf_ += '}';
    if (buf_.size() >= kFlushAt) flush();
  }
  // `,"key":` for a schema key.
  JsonLines& key(std::string_view k) {
    buf_ += ",\"";
    buf_ += k;
    buf_ += "\":";
    return *this;
  }
  // The first member of a nested object: no comma.
  JsonLines& first_key(std::string_view k) {
    buf_ += '"';
    buf_ += k;
    buf_ += "\":";
    return *this;
  }
  void str(std::string_view s) { append_json_string(buf_, s); }
  void u64(std::uint64_t v) { append_u64(buf_, v); }
  void f64(double v) { append_f64(buf_, v); }
  void boolean(bool v) { buf_ += v ? "true" : "false"; }
  void raw(std::string_view s) { buf_ += s; }  // JSON text written elsewhere

  void flush() {
    bytes_ += buf_.size();
    if (!buf_.empty()) sink_(buf_);
    buf_.clear();
  }
  std::uint64_t bytes() const noexcept { return bytes_ + buf_.size(); }

 private:
  const Sink& sink_;
  std::string buf_;
  bool first_ = true;
  std::uint64_t bytes_ = 0;
};

}  // namespace candle_graph::output
