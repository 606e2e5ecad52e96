// NVTX range names as nsys prints them: `<domain>:<text>`, so the default domain gives a leading
// `:` (nsight.md §6.1). Application span names are matched without that prefix (§10.3).
#pragma once

#include <string>
#include <string_view>
#include <unordered_set>

namespace candle_graph::import::nsight {

// Removes the domain prefix up to the first single `:`; `::` (C++ scopes such as
// `demo::train::update`) is never taken for a domain separator.
std::string_view strip_nvtx_domain(std::string_view name);

// The label used to join an NVTX range to the application: the raw name when it is itself an
// expected key, else the domain-stripped name. `matched` says whether it is an expected key.
struct SemanticLabel {
  std::string key;
  bool matched = false;
};
SemanticLabel semantic_label(std::string_view raw_name,
                             const std::unordered_set<std::string>& expected_keys);

}  // namespace candle_graph::import::nsight
