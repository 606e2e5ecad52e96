#include "memory/memory_order.hpp"

#include <algorithm>
#include <numeric>
#include <tuple>
#include <utility>

namespace candle_graph::memory {

namespace {

using Position = std::vector<std::uint32_t>::iterator;

// Sorts [first, last) by tensor_id, stably; usually already sorted (or one event).
void sort_by_id(Position first, Position last, const std::vector<MemoryEvent>& events) {
  auto id_less = [&](std::uint32_t a, std::uint32_t b) {
    return events[a].tensor_id < events[b].tensor_id;
  };
  if (last - first > 1 && !std::is_sorted(first, last, id_less))
    std::stable_sort(first, last, id_less);
}

// One instant's events, [first, last) in stream order: its allocs before its frees, each group
// by tensor_id, stably. `scratch` is reused from instant to instant.
void order_instant(Position first, Position last, const std::vector<MemoryEvent>& events,
                   std::vector<std::uint32_t>& scratch) {
  scratch.assign(first, last);
  Position out = first;
  for (const std::uint32_t i : scratch)
    if (events[i].action == MemoryAction::alloc) *out++ = i;
  const Position frees = out;
  for (const std::uint32_t i : scratch)
    if (events[i].action != MemoryAction::alloc) *out++ = i;
  sort_by_id(first, frees, events);
  sort_by_id(frees, last, events);
}

// Calls order_instant on every run of equal timestamps longer than one event; `time_at(i)` is
// the timestamp at position i of `order`, nondecreasing.
template <typename TimeAt>
void order_instants(std::vector<std::uint32_t>& order, const std::vector<MemoryEvent>& events,
                    TimeAt time_at) {
  std::vector<std::uint32_t> scratch;
  const std::size_t n = order.size();
  for (std::size_t first = 0; first < n;) {
    const std::uint64_t t = time_at(first);
    std::size_t last = first + 1;
    while (last < n && time_at(last) == t) ++last;
    if (last - first > 1)
      order_instant(order.begin() + static_cast<std::ptrdiff_t>(first),
                    order.begin() + static_cast<std::ptrdiff_t>(last), events, scratch);
    first = last;
  }
}

}  // namespace

// trace6.md §7.1 step 1: (timestamp, alloc before free, tensor_id); stable, so ties keep stream
// order. The events are first put in (stable) timestamp order, then each instant (usually one
// event) is ordered on its own. A stream already in time order, as probes write it, takes one
// pass that checks the order and orders the instants as it finds them. Otherwise (timestamp,
// index) pairs are sorted, which reads each timestamp once, in stream order, instead of from the
// events in every comparison (a cache miss each on a large trace). A whole-stream sort by the
// full key read the action of every event at random and made this a tenth of the memory replay.
std::vector<std::uint32_t> sorted_order(const std::vector<MemoryEvent>& events) {
  const std::size_t n = events.size();
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  {
    std::vector<std::uint32_t> scratch;
    std::size_t first = 0;  // the current instant's first position
    std::size_t i = 1;
    for (; i < n; ++i) {
      const std::uint64_t t = events[i].timestamp_ns, previous = events[i - 1].timestamp_ns;
      if (t == previous) continue;
      if (t < previous) break;
      if (i - first > 1)
        order_instant(order.begin() + static_cast<std::ptrdiff_t>(first),
                      order.begin() + static_cast<std::ptrdiff_t>(i), events, scratch);
      first = i;
    }
    if (i >= n) {
      if (n - first > 1)
        order_instant(order.begin() + static_cast<std::ptrdiff_t>(first), order.end(), events,
                      scratch);
      return order;
    }
  }
  // Out of time order.
  std::vector<std::pair<std::uint64_t, std::uint32_t>> keyed(n);
  for (std::uint32_t i = 0; i < n; ++i) keyed[i] = {events[i].timestamp_ns, i};
  std::sort(keyed.begin(), keyed.end());  // by (timestamp, index): the stable order
  for (std::size_t i = 0; i < n; ++i) order[i] = keyed[i].second;
  order_instants(order, events, [&](std::size_t position) { return keyed[position].first; });
  return order;
}

}  // namespace candle_graph::memory
