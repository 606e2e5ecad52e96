// trace6.md §6 trace health: is the span hierarchy sound enough to analyse, and what evidence is
// missing?
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "candle_graph/trace_document.hpp"

namespace candle_graph {

enum class HealthSeverity : std::uint8_t { error, warning };
std::string_view to_string(HealthSeverity v) noexcept;

struct HealthIssue {
  HealthSeverity severity = HealthSeverity::error;
  std::string_view code;  // one of the 21 codes of trace6.md §6 (static storage)
  std::string message;
  bool operator==(const HealthIssue&) const = default;
};

struct EvidenceCoverage {
  std::uint64_t spans = 0;
  std::uint64_t closed_spans = 0;
  std::uint64_t root_spans = 0;
  std::uint64_t measured_spans = 0;
  std::uint64_t operations = 0;
  std::uint64_t tensors = 0;
  std::uint64_t memory_events = 0;
  std::uint64_t device_memory_samples = 0;
  std::uint64_t gradients = 0;
  std::uint64_t edges = 0;
  std::uint64_t forward_spans = 0;
  std::uint64_t backward_spans = 0;
  std::uint64_t optimizer_spans = 0;
  bool operator==(const EvidenceCoverage&) const = default;
};

struct TraceHealth {
  bool trusted = true;  // no issue of severity error
  std::vector<HealthIssue> issues;
  EvidenceCoverage coverage;
  // Messages of the warning issues, in order (the evidence packet's gaps start with these).
  std::vector<std::string> gaps() const;
  // Messages of the error issues joined by "; " (what `trace is structurally untrusted:` shows).
  std::string error_summary() const;
};

// Linear in the number of events (memory pairing is n·log n for the stable timestamp sort).
TraceHealth analyze_health(const TraceDocument& doc);
// The same result; with `threads` above 1 the checks that only read the document run beside the
// others.
TraceHealth analyze_health(const TraceDocument& doc, unsigned threads);

}  // namespace candle_graph
