// A minimal compact JSON writer for the viewer payload: no whitespace, keys written by the caller
// in sorted order (§9.5: the viewer/4 payload has sorted keys at every level). Numbers and strings
// use output/json_text so they print like serde_json.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "output/json_text.hpp"

namespace candle_graph::viewer {

class CompactJson {
 public:
  std::string out;

  CompactJson& begin_object() { return open('{'); }
  CompactJson& end_object() { return close('}'); }
  CompactJson& begin_array() { return open('['); }
  CompactJson& end_array() { return close(']'); }
  CompactJson& key(std::string_view k) {
    comma();
    output::append_json_string(out, k);
    out += ':';
    after_key_ = true;
    return *this;
  }
  CompactJson& string(std::string_view s) {
    return value([&] { output::append_json_string(out, s); });
  }
  CompactJson& u64(std::uint64_t v) {
    return value([&] { output::append_u64(out, v); });
  }
  CompactJson& i64(std::int64_t v) {
    return value([&] { output::append_i64(out, v); });
  }
  CompactJson& f64(double v) {
    return value([&] { output::append_f64(out, v); });
  }
  CompactJson& boolean(bool v) {
    return value([&] { out += v ? "true" : "false"; });
  }
  CompactJson& null() {
    return value([&] { out += "null"; });
  }
  // JSON text produced elsewhere (whitespace inside it is harmless).
  CompactJson& raw(std::string_view json) {
    return value([&] { out += json; });
  }

 private:
  template <typename F>
  CompactJson& value(F&& write) {
    comma();
    write();
    return *this;
  }
  void comma() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (!first_.empty()) {
      if (!first_.back()) out += ',';
      first_.back() = false;
    }
  }
  CompactJson& open(char c) {
    comma();
    out += c;
    first_.push_back(true);
    return *this;
  }
  CompactJson& close(char c) {
    out += c;
    first_.pop_back();
    return *this;
  }
  std::vector<bool> first_;
  bool after_key_ = false;
};

}  // namespace candle_graph::viewer
