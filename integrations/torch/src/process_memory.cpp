// Reads VmRSS (/proc/self/status) and MemAvailable (/proc/meminfo); both are in kB there.
#include "process_memory.hpp"

#include <fstream>
#include <sstream>
#include <string>

namespace candle_graph::libtorch::detail {
namespace {

std::optional<std::uint64_t> read_kb_field(const char* file, std::string_view field) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, field.size(), field) != 0) continue;
    std::istringstream rest(line.substr(field.size()));
    std::uint64_t kb = 0;
    if (rest >> kb) return kb * 1024;
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::optional<ProcessMemory> read_process_memory() {
  const auto used = read_kb_field("/proc/self/status", "VmRSS:");
  const auto free = read_kb_field("/proc/meminfo", "MemAvailable:");
  if (!used || !free) return std::nullopt;
  return ProcessMemory{*used, *free};
}

}  // namespace candle_graph::libtorch::detail
