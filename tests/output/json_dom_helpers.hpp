// A DOM written value by value through the streaming writer: nlohmann's dump of the same DOM is
// the independent reference for the writer's text.
#pragma once

#include <nlohmann/json.hpp>

#include "output/json_stream.hpp"

namespace candle_graph::test {

void write_dom(output::JsonStream& w, const nlohmann::ordered_json& v);

}  // namespace candle_graph::test
