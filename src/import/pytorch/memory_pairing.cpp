// Pairing rules (docs/compatibility.md, "PyTorch convert"):
// - the whole trace is replayed in time order, so a block allocated before the window and freed
//   inside it is recognised: that free is dropped (`convert.dropped_frees_of_blocks_allocated_
//   before_window`), as is a free of a block never seen (`convert.dropped_unpaired_frees`);
// - an allocation at an address that is still live (its free was not recorded) first closes the
//   earlier block with a free at the same instant (`convert.closed_reused_addresses`);
// - blocks still live at the window's end stay allocated (trace/6 reports them as retained);
// - events outside the window are counted (`convert.memory_events_outside_window`).
#include "import/pytorch/memory_pairing.hpp"

#include <algorithm>
#include <unordered_map>

namespace candle_graph::import::pytorch {
namespace {

struct Live {
  std::uint64_t tensor;
  std::uint64_t bytes;
  bool in_window;
};

struct KeyHash {
  std::size_t operator()(const std::pair<std::uint32_t, std::uint64_t>& k) const noexcept {
    return std::hash<std::uint64_t>{}(k.second * 31 + k.first);
  }
};

}  // namespace

std::vector<PairedMemory> pair_memory(std::vector<MemoryInstant>& memory, std::int64_t begin,
                                      std::int64_t end,
                                      std::map<std::string, std::uint64_t>& repairs) {
  std::sort(memory.begin(), memory.end(), [](const MemoryInstant& a, const MemoryInstant& b) {
    return a.ts_ns != b.ts_ns ? a.ts_ns < b.ts_ns : a.order < b.order;
  });
  std::unordered_map<std::pair<std::uint32_t, std::uint64_t>, Live, KeyHash> live;
  std::vector<PairedMemory> out;
  std::uint64_t next_tensor = 1;
  for (const MemoryInstant& m : memory) {
    const bool inside = m.ts_ns >= begin && m.ts_ns <= end;
    if (!inside) ++repairs["convert.memory_events_outside_window"];
    const auto key = std::make_pair(m.device, m.addr);
    if (m.bytes > 0) {
      const auto it = live.find(key);
      if (it != live.end()) {
        if (it->second.in_window && inside) {
          out.push_back({m.ts_ns, it->second.tensor, m.device, it->second.bytes, false});
          ++repairs["convert.closed_reused_addresses"];
        }
        live.erase(it);
      }
      const std::uint64_t tensor = next_tensor++;
      live.emplace(key, Live{tensor, static_cast<std::uint64_t>(m.bytes), inside});
      if (inside)
        out.push_back({m.ts_ns, tensor, m.device, static_cast<std::uint64_t>(m.bytes), true});
      continue;
    }
    const auto it = live.find(key);
    if (it == live.end()) {
      if (inside) ++repairs["convert.dropped_unpaired_frees"];
      continue;
    }
    if (inside) {
      if (it->second.in_window) {
        out.push_back({m.ts_ns, it->second.tensor, m.device, it->second.bytes, false});
      } else {
        ++repairs["convert.dropped_frees_of_blocks_allocated_before_window"];
      }
    }
    live.erase(it);
  }
  return out;
}

}  // namespace candle_graph::import::pytorch
