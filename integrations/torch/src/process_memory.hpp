// CPU "device memory" for the device_memory checkpoints: the process resident
// set as used bytes and the kernel's MemAvailable as free bytes, both read from /proc.
#pragma once

#include <cstdint>
#include <optional>

namespace candle_graph::libtorch::detail {

struct ProcessMemory {
  std::uint64_t used_bytes = 0;  // VmRSS of this process
  std::uint64_t free_bytes = 0;  // MemAvailable of the machine
};

// nullopt when /proc is not readable (the checkpoint is then skipped, not invented).
std::optional<ProcessMemory> read_process_memory();

}  // namespace candle_graph::libtorch::detail
