// Reads the resident set (/proc/self/statm) and MemAvailable (/proc/meminfo) with one read()
// each into a stack buffer: no iostream and no heap work right before the captured update.
#include "process_memory.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <string_view>

namespace candle_graph::libtorch::detail {
namespace {

// The first `size` bytes of a small /proc file (enough for the fields read here), or an empty
// view when it cannot be read.
std::string_view read_proc_file(const char* path, char* buffer, std::size_t size) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  const ssize_t n = ::read(fd, buffer, size);
  ::close(fd);
  return n > 0 ? std::string_view(buffer, static_cast<std::size_t>(n)) : std::string_view();
}

std::optional<std::uint64_t> leading_number(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  return value;
}

// statm: "size resident shared ..." in pages; resident is what /proc/self/status calls VmRSS.
std::optional<std::uint64_t> resident_bytes() {
  char buffer[256];
  const std::string_view statm = read_proc_file("/proc/self/statm", buffer, sizeof buffer);
  const std::size_t space = statm.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const auto pages = leading_number(statm.substr(space + 1));
  const long page = ::sysconf(_SC_PAGESIZE);
  if (!pages || page <= 0) return std::nullopt;
  return *pages * static_cast<std::uint64_t>(page);
}

std::optional<std::uint64_t> available_bytes() {
  char buffer[4096];
  const std::string_view meminfo = read_proc_file("/proc/meminfo", buffer, sizeof buffer);
  constexpr std::string_view kField = "\nMemAvailable:";
  const std::size_t at = meminfo.find(kField);
  if (at == std::string_view::npos) return std::nullopt;
  const auto kb = leading_number(meminfo.substr(at + kField.size()));
  if (!kb) return std::nullopt;
  return *kb * 1024;
}

}  // namespace

std::optional<ProcessMemory> read_process_memory() {
  const auto used = resident_bytes();
  const auto free = available_bytes();
  if (!used || !free) return std::nullopt;
  return ProcessMemory{*used, *free};
}

}  // namespace candle_graph::libtorch::detail
