#include "output/json_document.hpp"

namespace candle_graph::output {

std::string to_pretty(const OrderedJson& value) {
  return value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string to_pretty(const SortedJson& value) {
  return value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace candle_graph::output
