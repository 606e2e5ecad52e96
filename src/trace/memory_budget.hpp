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
// `summary` (the reader plus the analyses every command runs), rounded up.
inline constexpr double kTrace6BytesPerInputByte = 1.6;
inline constexpr double kTraceEventBytesPerInputByte = 2.4;

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

}  // namespace candle_graph
