// NVTX domain stripping and exact semantic-label matching (trace6.md §10.3, nsight.md §6.3).
#include "import/nsight/nvtx_label.hpp"

namespace candle_graph::import::nsight {

std::string_view strip_nvtx_domain(std::string_view name) {
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] != ':') continue;
    const bool doubled =
        (i + 1 < name.size() && name[i + 1] == ':') || (i > 0 && name[i - 1] == ':');
    if (doubled) {
      ++i;  // skip the second colon of `::`
      continue;
    }
    return name.substr(i + 1);
  }
  return name;
}

SemanticLabel semantic_label(std::string_view raw_name,
                             const std::unordered_set<std::string>& expected_keys) {
  std::string raw(raw_name);
  if (expected_keys.contains(raw)) return {std::move(raw), true};
  std::string stripped(strip_nvtx_domain(raw_name));
  const bool matched = expected_keys.contains(stripped);
  return {std::move(stripped), matched};
}

}  // namespace candle_graph::import::nsight
