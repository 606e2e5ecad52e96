// The table PyTorch users compare us with: key_averages() (pytorch.md §G9). One row per op name
// over the measured region: calls, host self and total time (the nesting of host ops on their
// thread), device self and total time (the device work each op launched, and its descendants').
// As key_averages, an op whose one child has its own name is one call: the child's time and
// device work are the parent's (PyTorch's _remove_dup_nodes).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "candle_graph/graph.hpp"
#include "device/device_time.hpp"

namespace candle_graph::evidence {

struct OpRow {
  std::string_view name;
  std::uint64_t calls = 0;
  std::uint64_t host_self_ns = 0;
  std::uint64_t host_total_ns = 0;
  std::uint64_t device_self_ns = 0;
  std::uint64_t device_total_ns = 0;
};

struct OpTable {
  std::vector<OpRow> rows;  // by host self time, descending; ties by name
  std::uint64_t unattributed_device_ns = 0;
  std::uint64_t device_ns = 0;  // all device work, summed
};

OpTable op_table(const ExecutionGraph& graph, const device::DeviceTime& device);

// Per op of the document: the op whose call it is part of (its parent, when it is that parent's
// only child and has its name: PyTorch's _remove_dup_nodes), else kNoIndex.
std::vector<std::uint32_t> merged_into_parent(const ExecutionGraph& graph);

}  // namespace candle_graph::evidence
