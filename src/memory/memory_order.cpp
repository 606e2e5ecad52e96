#include "memory/memory_order.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

namespace candle_graph::memory {

// trace6.md §7.1 step 1: (timestamp, alloc before free, tensor_id); stable, so ties keep stream
// order. Sorted in two passes that give the same order without comparing strings on the whole
// stream: stably by the integer key (timestamp, alloc first) — usually a single linear check, since
// probes write events in time order — then each run of equal integer keys stably by tensor_id.
// Runs are short (the allocs and frees of one instant), and a whole-stream sort that compared
// ids was a fifth of `summary` on traces whose same-instant ids were not in id order.
std::vector<std::uint32_t> sorted_order(const std::vector<MemoryEvent>& events) {
  std::vector<std::uint32_t> order(events.size());
  std::iota(order.begin(), order.end(), 0u);
  auto key = [&](std::uint32_t i) {
    const MemoryEvent& e = events[i];
    return std::pair{e.timestamp_ns, e.action == MemoryAction::alloc ? 0 : 1};
  };
  auto key_less = [&](std::uint32_t a, std::uint32_t b) { return key(a) < key(b); };
  if (!std::is_sorted(order.begin(), order.end(), key_less))
    std::stable_sort(order.begin(), order.end(), key_less);
  auto id_less = [&](std::uint32_t a, std::uint32_t b) {
    return events[a].tensor_id < events[b].tensor_id;
  };
  for (auto run = order.begin(); run != order.end();) {
    const auto run_key = key(*run);
    auto end = run + 1;
    while (end != order.end() && key(*end) == run_key) ++end;
    if (end - run > 1 && !std::is_sorted(run, end, id_less)) std::stable_sort(run, end, id_less);
    run = end;
  }
  return order;
}

}  // namespace candle_graph::memory
