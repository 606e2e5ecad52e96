// Reads the resident set (/proc/self/statm) and MemAvailable (/proc/meminfo) with one pread()
// each into stack buffers: the start checkpoint is taken right before the captured update, so
// it should leave as little behind in the caches as possible (no iostream, no heap, no
// open/close).
#include "process_memory.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cstring>
#include <string_view>

namespace candle_graph::libtorch::detail {
namespace {

// One /proc file kept open for the life of the process and re-read with pread at offset 0 (the
// kernel regenerates the text on every read from 0): a checkpoint then costs one system call
// per file instead of open + read + close. The start checkpoint is taken right before the
// captured update, and every kernel entry there leaves colder caches and branch predictors to
// the update. A forked child reopens (its /proc/self is not the parent's).
class ProcFile {
 public:
  explicit constexpr ProcFile(const char* path) : path_(path) {}

  // The file's first `size` bytes (enough for the fields read here), or an empty view.
  std::string_view read(char* buffer, std::size_t size) {
    int fd = fd_.load(std::memory_order_acquire);
    if (fd < 0) {
      const int opened = ::open(path_, O_RDONLY | O_CLOEXEC);
      if (opened < 0) return {};
      if (fd_.compare_exchange_strong(fd, opened, std::memory_order_acq_rel)) {
        fd = opened;
      } else {
        ::close(opened);  // another thread was first; fd holds its descriptor
      }
    }
    const ssize_t n = ::pread(fd, buffer, size, 0);
    return n > 0 ? std::string_view(buffer, static_cast<std::size_t>(n)) : std::string_view();
  }

  void forget_after_fork() noexcept {
    const int fd = fd_.exchange(-1);
    if (fd >= 0) ::close(fd);
  }

 private:
  const char* path_;
  std::atomic<int> fd_{-1};
};

ProcFile g_statm("/proc/self/statm");
ProcFile g_meminfo("/proc/meminfo");

void forget_files_in_child() noexcept {
  g_statm.forget_after_fork();
  g_meminfo.forget_after_fork();
}

void register_fork_handler_once() {
  static const bool registered = [] {
    ::pthread_atfork(nullptr, nullptr, &forget_files_in_child);
    return true;
  }();
  (void)registered;
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
  const std::string_view statm = g_statm.read(buffer, sizeof buffer);
  const std::size_t space = statm.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const auto pages = leading_number(statm.substr(space + 1));
  const long page = ::sysconf(_SC_PAGESIZE);
  if (!pages || page <= 0) return std::nullopt;
  return *pages * static_cast<std::uint64_t>(page);
}

std::optional<std::uint64_t> available_bytes() {
  char buffer[4096];
  const std::string_view meminfo = g_meminfo.read(buffer, sizeof buffer);
  constexpr std::string_view kField = "\nMemAvailable:";
  const std::size_t at = meminfo.find(kField);
  if (at == std::string_view::npos) return std::nullopt;
  const auto kb = leading_number(meminfo.substr(at + kField.size()));
  if (!kb) return std::nullopt;
  return *kb * 1024;
}

}  // namespace

std::optional<ProcessMemory> read_process_memory() {
  register_fork_handler_once();
  const auto used = resident_bytes();
  const auto free = available_bytes();
  if (!used || !free) return std::nullopt;
  return ProcessMemory{*used, *free};
}

}  // namespace candle_graph::libtorch::detail
