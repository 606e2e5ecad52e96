// Refusing, before reading, a trace whose events would need more memory than the machine has:
// a clear error instead of a process the OOM killer ends halfway through. The need is estimated
// from the input's size times the peak resident bytes per input byte measured for each reader
// (docs/performance.md, "Memory per input byte"); the limit is CANDLE_GRAPH_MEMORY_LIMIT when
// set, else MemAvailable from /proc/meminfo.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace candle_graph {

inline constexpr const char* kMemoryLimitVariable = "CANDLE_GRAPH_MEMORY_LIMIT";

// Peak resident bytes per input byte (decompressed), measured with /usr/bin/time -f %M on
// `summary` (the reader plus the analyses every command runs) for files of the usual shape,
// rounded up. Files of smaller events need more per byte: MemoryWatch stops those while they
// are read.
inline constexpr double kTrace6BytesPerInputByte = 1.6;
inline constexpr double kTraceEventBytesPerInputByte = 1.0;

// Below this much, the default limit (the available memory) is not even read: any machine that
// runs the tool has it, and small inputs (tests, fuzzing) then cost no /proc/meminfo read.
// A configured limit is always applied.
inline constexpr std::uint64_t kAlwaysAvailableBytes = std::uint64_t{64} << 20;

// The limit in bytes: CANDLE_GRAPH_MEMORY_LIMIT (bytes, or with a K, M, G or T suffix of powers
// of 1024; `unlimited` or 0: none), else MemAvailable; nullopt when there is none. Throws Error
// (usage) naming the variable when its value cannot be read.
std::optional<std::uint64_t> memory_limit();

// The bytes a reader will see in `path`: its size, or for gzip its decompressed size as the
// gzip trailer records it (modulo 4 GiB, so at least the compressed size is assumed).
std::uint64_t input_bytes(const std::filesystem::path& path);

// Throws Error (kind resource) naming `path` when reading `input_bytes` of it, at
// `bytes_per_input_byte`, would need more than memory_limit().
void check_memory_budget(const std::string& path, std::uint64_t input_bytes,
                         double bytes_per_input_byte);

// Peak resident bytes per event kept from a Chrome Trace Event file (ops, spans, device work,
// memory events), measured like the ratios above on files of small and of usual events, rounded
// up: how many events there are says more than the file's size, once they are decoded.
inline constexpr double kTraceEventBytesPerEvent = 480;

// Throws Error (kind resource) naming `path` when `events` at `bytes_per_event` would need more
// than memory_limit(); called between decoding and building the document.
void check_event_budget(const std::string& path, std::uint64_t events, double bytes_per_event);

// Throws Error (kind resource) naming `path` when `what` (e.g. "comparing its spans") needs
// `bytes` of memory, more than memory_limit(). Below kAlwaysAvailableBytes only a configured limit
// is checked.
void check_memory_need(const std::string& path, double bytes, const std::string& what);

// Watches the process's peak resident memory while a trace is read: check() throws Error (kind
// resource) naming the file and the byte reached once it exceeds the limit (the configured one,
// else what the process holds when it first passes kAlwaysAvailableBytes plus the memory then
// available). One getrusage call per check: readers call it once per chunk of input.
class MemoryWatch {
 public:
  explicit MemoryWatch(std::string path);
  void check(std::uint64_t offset);

 private:
  std::string path_;
  bool configured_ = false;             // CANDLE_GRAPH_MEMORY_LIMIT is set
  bool limit_known_ = false;            // the default limit is read once, when first needed
  std::optional<std::uint64_t> limit_;  // nullopt: no limit
};

}  // namespace candle_graph
