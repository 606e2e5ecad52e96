// The device work of a document grouped by name and device, as the device's own table: calls
// and time per kernel, memcpy and memset (syncs are waits, not work), with C++ names demangled for
// display (abi::__cxa_demangle) and the raw name kept.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "candle_graph/trace_document.hpp"

namespace candle_graph::device {

struct KernelRow {
  std::string_view raw_name;
  std::string name;  // demangled when the raw name is an Itanium-mangled C++ name
  std::string_view device;
  OpKind kind = OpKind::kernel;
  std::uint64_t calls = 0;
  std::uint64_t total_ns = 0;
  std::uint64_t min_ns = 0;
  std::uint64_t max_ns = 0;
};

// Rows by total time, descending; ties by raw name and device.
std::vector<KernelRow> kernel_table(const TraceDocument& doc);

// `raw` demangled when it is a mangled C++ name (`_Z…`), else `raw` itself.
std::string demangled(std::string_view raw);

// demangled() once per distinct name: a trace repeats a few hundred kernel names up to millions of
// times. The names are views into the document, which must outlive the cache.
class DemangledNames {
 public:
  const std::string& operator()(std::string_view raw) {
    auto it = names_.find(raw);
    if (it == names_.end()) it = names_.emplace(raw, demangled(raw)).first;
    return it->second;
  }

 private:
  std::unordered_map<std::string_view, std::string> names_;
};

}  // namespace candle_graph::device
