// The JSON ceiling every reader and analysis benchmark is compared with: simdjson's DOM
// parse_many over the whole file, doing nothing with the documents.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <string>

namespace candle_graph::bench {

// 0 when every document parsed and there was at least one, else 1.
inline int run_parse_many(const std::string& path) {
  simdjson::padded_string json;
  if (simdjson::padded_string::load(path).get(json)) return 1;
  simdjson::dom::parser parser;
  simdjson::dom::document_stream docs;
  if (parser.parse_many(json).get(docs)) return 1;
  std::size_t count = 0;
  for (auto doc : docs) {
    if (doc.error()) return 1;
    ++count;
  }
  return count > 0 ? 0 : 1;
}

}  // namespace candle_graph::bench
