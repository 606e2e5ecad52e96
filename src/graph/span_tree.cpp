#include "graph/span_tree.hpp"

namespace candle_graph::graph {

SpanTree build_span_tree(const TraceDocument& doc) {
  const auto& parent = doc.span_parent();
  const std::size_t n = doc.spans().size();
  SpanTree t;
  t.offsets.assign(n + 1, 0);
  for (std::uint32_t p : parent)
    if (p != kNoIndex) ++t.offsets[p + 1];
  for (std::size_t i = 0; i < n; ++i) t.offsets[i + 1] += t.offsets[i];
  t.children.resize(t.offsets[n]);
  std::vector<std::uint32_t> fill(t.offsets.begin(), t.offsets.end() - 1);
  for (std::uint32_t i = 0; i < n; ++i)
    if (parent[i] != kNoIndex) t.children[fill[parent[i]]++] = i;
  std::vector<std::uint32_t> roots;
  for (std::uint32_t i = 0; i < n; ++i)
    if (parent[i] == kNoIndex) roots.push_back(i);
  t.preorder = descendants_of(t, std::move(roots), n);
  return t;
}

std::vector<std::uint32_t> descendants_of(const SpanTree& tree,
                                          const std::vector<std::uint32_t>& starts,
                                          std::size_t span_count) {
  // Breadth-first with a visited mark: parents are emitted before their children, and a parent
  // cycle (possible in untrusted documents) cannot loop.
  std::vector<std::uint8_t> seen(span_count, 0);
  std::vector<std::uint32_t> out;
  for (std::uint32_t s : starts)
    if (!seen[s]) {
      seen[s] = 1;
      out.push_back(s);
    }
  for (std::size_t head = 0; head < out.size(); ++head) {
    const std::uint32_t s = out[head];
    for (std::uint32_t k = tree.offsets[s]; k < tree.offsets[s + 1]; ++k) {
      const std::uint32_t c = tree.children[k];
      if (!seen[c]) {
        seen[c] = 1;
        out.push_back(c);
      }
    }
  }
  return out;
}

}  // namespace candle_graph::graph
