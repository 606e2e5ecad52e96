// Pretty printing of JSON values built with nlohmann::json: 2 spaces, `"key": value`, the layout
// serde_json's pretty printer produces. ordered_json keeps declaration order; json sorts keys.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace candle_graph::output {

using OrderedJson = nlohmann::ordered_json;
using SortedJson = nlohmann::json;

std::string to_pretty(const OrderedJson& value);
std::string to_pretty(const SortedJson& value);

}  // namespace candle_graph::output
