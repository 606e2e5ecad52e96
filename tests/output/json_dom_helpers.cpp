#include "json_dom_helpers.hpp"

#include <cstdint>
#include <string>

namespace candle_graph::test {

void write_dom(output::JsonStream& w, const nlohmann::ordered_json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::object:
      w.begin_object();
      for (auto it = v.begin(); it != v.end(); ++it) {
        w.key(it.key());
        write_dom(w, it.value());
      }
      w.end_object();
      break;
    case nlohmann::json::value_t::array:
      w.begin_array();
      for (const auto& item : v) write_dom(w, item);
      w.end_array();
      break;
    case nlohmann::json::value_t::string:
      w.string(v.get_ref<const std::string&>());
      break;
    case nlohmann::json::value_t::boolean:
      w.boolean(v.get<bool>());
      break;
    case nlohmann::json::value_t::number_unsigned:
      w.u64(v.get<std::uint64_t>());
      break;
    case nlohmann::json::value_t::number_integer:
      w.i64(v.get<std::int64_t>());
      break;
    case nlohmann::json::value_t::number_float:
      w.f64(v.get<double>());
      break;
    default:
      w.null();
      break;
  }
}

}  // namespace candle_graph::test
