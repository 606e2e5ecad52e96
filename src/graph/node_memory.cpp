#include "graph/node_memory.hpp"

#include <algorithm>

namespace candle_graph::graph {

SpanMemory node_memory_metrics(const TraceDocument& doc, const MemoryProfile& memory,
                               const SpanTree& tree) {
  const std::size_t n = doc.spans().size();
  SpanMemory m{std::vector<std::uint64_t>(n, 0), std::vector<std::uint64_t>(n, 0)};
  // Step 1: each byte-carrying op adds its storage bytes to its span.
  const auto& op_span = doc.op_span();
  for (std::size_t k = 0; k < doc.ops().size(); ++k) {
    const std::uint64_t b = doc.ops()[k].storage_bytes.value_or(0);
    const std::uint32_t s = op_span[k];
    if (b == 0 || s == kNoIndex) continue;
    m.bytes[s] = m.bytes[s] + b < m.bytes[s] ? UINT64_MAX : m.bytes[s] + b;
  }
  // Step 2 (fixed): allocations live at the global peak raise their span's peak.
  for (const LiveAllocation& a : memory.peak_breakdown) {
    const std::uint32_t s = doc.find_span(a.span_id);
    if (s != kNoIndex) m.peak[s] = std::max(m.peak[s], a.bytes);
  }
  // Step 3: roll up bottom-up — children are finished before their parent in reverse preorder.
  for (auto it = tree.preorder.rbegin(); it != tree.preorder.rend(); ++it) {
    const std::uint32_t s = *it;
    std::uint64_t peak = std::max(m.peak[s], m.bytes[s]);
    for (std::uint32_t k = tree.offsets[s]; k < tree.offsets[s + 1]; ++k)
      peak = std::max(peak, m.peak[tree.children[k]]);
    m.peak[s] = peak;
  }
  return m;
}

}  // namespace candle_graph::graph
