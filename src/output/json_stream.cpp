#include "output/json_stream.hpp"

#include "output/json_text.hpp"

namespace candle_graph::output {

JsonStream::JsonStream(Sink sink, std::size_t flush_at)
    : sink_(std::move(sink)), flush_at_(flush_at) {
  if (sink_) buf_.reserve(flush_at_ + 4096);
}

void JsonStream::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (stack_.empty()) return;  // the top-level value
  Level& l = stack_.back();
  if (!l.empty) buf_.push_back(',');
  l.empty = false;
  buf_.push_back('\n');
  buf_.append(2 * stack_.size(), ' ');
}

JsonStream& JsonStream::key(std::string_view k) {
  Level& l = stack_.back();
  if (!l.empty) buf_.push_back(',');
  l.empty = false;
  buf_.push_back('\n');
  buf_.append(2 * stack_.size(), ' ');
  append_json_string(buf_, k);
  buf_.append(": ");
  after_key_ = true;
  return *this;
}

JsonStream& JsonStream::begin_object() {
  before_value();
  buf_.push_back('{');
  stack_.push_back({false, true});
  return *this;
}

JsonStream& JsonStream::begin_array() {
  before_value();
  buf_.push_back('[');
  stack_.push_back({true, true});
  return *this;
}

void JsonStream::close(char bracket) {
  const bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty) {
    buf_.push_back('\n');
    buf_.append(2 * stack_.size(), ' ');
  }
  buf_.push_back(bracket);
  maybe_flush();
}

JsonStream& JsonStream::end_object() {
  close('}');
  return *this;
}

JsonStream& JsonStream::end_array() {
  close(']');
  return *this;
}

JsonStream& JsonStream::string(std::string_view s) {
  before_value();
  append_json_string(buf_, s);
  return *this;
}

JsonStream& JsonStream::u64(std::uint64_t v) {
  before_value();
  append_u64(buf_, v);
  return *this;
}

JsonStream& JsonStream::i64(std::int64_t v) {
  before_value();
  append_i64(buf_, v);
  return *this;
}

JsonStream& JsonStream::f64(double v) {
  before_value();
  append_f64(buf_, v);
  return *this;
}

JsonStream& JsonStream::boolean(bool v) {
  before_value();
  buf_.append(v ? "true" : "false");
  return *this;
}

JsonStream& JsonStream::null() {
  before_value();
  buf_.append("null");
  return *this;
}

template <typename J>
void JsonStream::write_dom(const J& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::object:
      begin_object();
      for (auto it = v.begin(); it != v.end(); ++it) {
        key(it.key());
        write_dom(it.value());
      }
      end_object();
      break;
    case nlohmann::json::value_t::array:
      begin_array();
      for (const auto& item : v) write_dom(item);
      end_array();
      break;
    case nlohmann::json::value_t::string:
      string(v.template get_ref<const std::string&>());
      break;
    case nlohmann::json::value_t::boolean:
      boolean(v.template get<bool>());
      break;
    case nlohmann::json::value_t::number_unsigned:
      u64(v.template get<std::uint64_t>());
      break;
    case nlohmann::json::value_t::number_integer:
      i64(v.template get<std::int64_t>());
      break;
    case nlohmann::json::value_t::number_float:
      f64(v.template get<double>());
      break;
    default:
      null();
      break;
  }
}

JsonStream& JsonStream::json(const OrderedJson& v) {
  write_dom(v);
  return *this;
}

JsonStream& JsonStream::json(const SortedJson& v) {
  write_dom(v);
  return *this;
}

void JsonStream::maybe_flush() {
  if (sink_ && buf_.size() >= flush_at_) {
    sink_(buf_);
    buf_.clear();
  }
}

void JsonStream::finish() {
  buf_.push_back('\n');
  if (sink_) {
    sink_(buf_);
    buf_.clear();
  }
}

std::string JsonStream::take() {
  return std::move(buf_);
}

}  // namespace candle_graph::output
