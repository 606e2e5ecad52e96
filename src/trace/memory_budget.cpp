#include "trace/memory_budget.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>

#include <sys/resource.h>

#include "candle_graph/error.hpp"

namespace candle_graph {
namespace {

std::optional<std::uint64_t> mem_available() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> parse_size(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  std::string_view suffix(end, static_cast<std::size_t>(text.data() + text.size() - end));
  if (!suffix.empty() && (suffix.back() == 'B' || suffix.back() == 'b')) suffix.remove_suffix(1);
  if (suffix.empty()) return value;
  if (suffix.size() != 1) return std::nullopt;
  const std::string_view units = "KMGT";
  const std::size_t power = units.find(static_cast<char>(std::toupper(suffix[0])));
  if (power == std::string_view::npos) return std::nullopt;
  const unsigned shift = 10 * static_cast<unsigned>(power + 1);
  if (value > (std::numeric_limits<std::uint64_t>::max() >> shift)) return std::nullopt;
  return value << shift;
}

// In the largest unit that leaves at least 1 below 1 MiB (a limit of 1 byte and a 3 KiB file both
// read "1 MiB" when everything was shown in MiB), and at least 10 above (up to 10 GiB, MiB say
// more). A need is rounded up and a limit down, so that a need over a limit never reads as equal
// to it.
enum class Round { up, down };
std::string size_text(double bytes, Round round = Round::up) {
  const auto in = [&](double unit) {
    return round == Round::up ? std::ceil(bytes / unit) : std::floor(bytes / unit);
  };
  char buf[40];
  if (bytes < 1024.0) {
    const double n = in(1.0);
    std::snprintf(buf, sizeof buf, n == 1.0 ? "%.0f byte" : "%.0f bytes", n);
  } else if (bytes < 1024.0 * 1024.0) {
    std::snprintf(buf, sizeof buf, "%.0f KiB", in(1024.0));
  } else if (bytes < 10.0 * 1024 * 1024 * 1024) {
    std::snprintf(buf, sizeof buf, "%.0f MiB", in(1024.0 * 1024.0));
  } else if (bytes < 10.0 * 1024 * 1024 * 1024 * 1024) {
    std::snprintf(buf, sizeof buf, "%.0f GiB", in(1024.0 * 1024.0 * 1024.0));
  } else {
    std::snprintf(buf, sizeof buf, "%.0f TiB", in(1024.0 * 1024.0 * 1024.0 * 1024.0));
  }
  return buf;
}

}  // namespace

std::optional<std::uint64_t> memory_limit() {
  const char* text = std::getenv(kMemoryLimitVariable);
  if (text == nullptr || *text == '\0') return mem_available();
  const std::string_view value(text);
  if (value == "unlimited") return std::nullopt;
  const auto limit = parse_size(value);
  if (!limit)
    throw Error(ErrorKind::usage, kMemoryLimitVariable, 0,
                "`" + std::string(value) +
                    "` is not a size: bytes, or a number with K, M, G or T, or `unlimited`");
  if (*limit == 0) return std::nullopt;
  return limit;
}

std::uint64_t input_bytes(const std::filesystem::path& path) {
  std::error_code ec;
  const std::uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) return 0;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  unsigned char magic[2] = {0, 0};
  if (!f || std::fread(magic, 1, 2, f.get()) != 2 || magic[0] != 0x1f || magic[1] != 0x8b)
    return size;
  // RFC 1952 §2.3.1: the last four bytes are ISIZE, the input size modulo 2^32, little-endian.
  unsigned char isize[4] = {0, 0, 0, 0};
  if (size < 18 || std::fseek(f.get(), -4, SEEK_END) != 0 || std::fread(isize, 1, 4, f.get()) != 4)
    return size;
  const std::uint64_t expanded = std::uint64_t{isize[0]} | std::uint64_t{isize[1]} << 8 |
                                 std::uint64_t{isize[2]} << 16 | std::uint64_t{isize[3]} << 24;
  return std::max(size, expanded);
}

namespace {

// Throws when `need` bytes exceed the limit; `what` says what needs them.
bool limit_configured() {
  const char* text = std::getenv(kMemoryLimitVariable);
  return text != nullptr && *text != '\0';
}

void refuse_over_limit(const std::string& path, double need, const std::string& what) {
  const bool configured = limit_configured();
  if (!configured && need < static_cast<double>(kAlwaysAvailableBytes)) return;
  const auto limit = memory_limit();
  if (!limit || need <= static_cast<double>(*limit)) return;
  throw Error(ErrorKind::resource, path, 0,
              what + " needs about " + size_text(need) + " of memory, more than the " +
                  size_text(static_cast<double>(*limit), Round::down) + " " +
                  (configured ? std::string("that ") + kMemoryLimitVariable + " allows"
                              : "available (MemAvailable)") +
                  "; free memory or set " + kMemoryLimitVariable +
                  " to a larger size (`unlimited`: no check)");
}

}  // namespace

void check_memory_budget(const std::string& path, std::uint64_t input_bytes,
                         double bytes_per_input_byte) {
  refuse_over_limit(path, static_cast<double>(input_bytes) * bytes_per_input_byte,
                    "reading its " + size_text(static_cast<double>(input_bytes)));
}

void check_memory_need(const std::string& path, double bytes, const std::string& what) {
  refuse_over_limit(path, bytes, what);
}

void check_event_budget(const std::string& path, std::uint64_t events, double bytes_per_event) {
  refuse_over_limit(path, static_cast<double>(events) * bytes_per_event,
                    "analysing its " + std::to_string(events) + " events");
}

namespace {

std::uint64_t peak_resident_bytes() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // Linux: KiB
}

}  // namespace

MemoryWatch::MemoryWatch(std::string path)
    : path_(std::move(path)), configured_(limit_configured()) {
  if (configured_) {
    limit_ = memory_limit();
    limit_known_ = true;
  }
}

void MemoryWatch::check(std::uint64_t offset) {
  const std::uint64_t held = peak_resident_bytes();
  if (!limit_known_) {
    if (held < kAlwaysAvailableBytes) return;
    // The available memory is what may still be added to what the process holds already.
    limit_ = memory_limit();
    if (limit_) *limit_ += held;
    limit_known_ = true;
  }
  if (!limit_ || held <= *limit_) return;
  throw Error(ErrorKind::resource, path_, 0,
              "reading stopped at byte " + std::to_string(offset) + ": the process holds " +
                  size_text(static_cast<double>(held)) + ", more than the " +
                  size_text(static_cast<double>(*limit_), Round::down) + " " +
                  (configured_ ? std::string("that ") + kMemoryLimitVariable + " allows"
                               : "available (MemAvailable) when it passed 64 MiB") +
                  "; free memory or set " + kMemoryLimitVariable +
                  " to a larger size (`unlimited`: no check)");
}

}  // namespace candle_graph
