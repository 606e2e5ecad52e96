#include "memory/backward_spans.hpp"

namespace candle_graph::memory {

std::vector<std::uint8_t> backward_subtree_flags(const TraceDocument& doc) {
  const auto& parent = doc.span_parent();
  const std::size_t n = doc.spans().size();
  enum : std::uint8_t { kUnknown, kOnPath, kDone };
  std::vector<std::uint8_t> state(n, kUnknown), flag(n, 0);
  std::vector<std::uint32_t> path;
  for (std::uint32_t i = 0; i < n; ++i) {
    // Walk up to a resolved ancestor (or the root, or a cycle), then resolve downwards, so every
    // span is visited a constant number of times.
    std::uint32_t cur = i;
    while (cur != kNoIndex && state[cur] == kUnknown) {
      state[cur] = kOnPath;
      path.push_back(cur);
      cur = parent[cur];
    }
    std::uint8_t inherited = (cur != kNoIndex && state[cur] == kDone) ? flag[cur] : 0;
    for (auto it = path.rbegin(); it != path.rend(); ++it) {
      const SpanRecord& s = doc.spans()[*it];
      inherited = inherited || s.step == ExecutionStep::backward;
      flag[*it] = inherited;
      state[*it] = kDone;
    }
    path.clear();
  }
  return flag;
}

}  // namespace candle_graph::memory
