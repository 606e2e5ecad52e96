// Whether a text an output writes is one valid JSON document: simdjson's DOM parser, which checks
// the whole document (structure, strings, numbers), not only what a reader asks for.
#pragma once

#include <simdjson.h>

#include <string_view>

#include "fuzz_support.hpp"

namespace candle_graph::fuzz {

inline void check_valid_json(std::string_view text, const char* what) {
  simdjson::dom::parser json;
  simdjson::dom::element root;
  if (const auto err = json.parse(text.data(), text.size()).get(root))
    fail(what, simdjson::error_message(err));
}

}  // namespace candle_graph::fuzz
