// The baseline comparison candle-graph/comparison/1 (docs/format/trace6.md §9.4): whether two runs
// are comparable, their total and peak deltas, the span groups and gradients that changed.
// A Comparison owns its strings and outlives both documents.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "candle_graph/trace_document.hpp"

namespace candle_graph {

inline constexpr std::string_view kComparisonSchema = "candle-graph/comparison/1";

struct SpanComparison {
  std::string name;  // the key `{root path} [{kind}]/{Step}`
  std::uint64_t baseline_count = 0;
  std::uint64_t candidate_count = 0;
  std::uint64_t baseline_total_ns = 0;
  std::uint64_t candidate_total_ns = 0;
  std::uint64_t baseline_mean_ns = 0;
  std::uint64_t candidate_mean_ns = 0;
  std::int64_t delta_ns = 0;
  std::optional<double> delta_percent;
};

struct GradientComparison {
  std::string parameter;  // `{root}/{key}`
  std::optional<GradientState> baseline_state;
  std::optional<GradientState> candidate_state;
  std::optional<double> baseline_norm;
  std::optional<double> candidate_norm;
  std::optional<double> norm_delta;
};

struct Comparison {
  std::string baseline_run_id;
  std::string candidate_run_id;
  bool comparable = true;
  std::vector<std::string> warnings;
  std::int64_t total_delta_ns = 0;
  std::optional<double> total_delta_percent;
  std::uint64_t baseline_peak_bytes = 0;
  std::uint64_t candidate_peak_bytes = 0;
  std::int64_t peak_delta_bytes = 0;
  std::vector<SpanComparison> spans;          // ≤ 50, largest |delta_ns| first
  std::vector<GradientComparison> gradients;  // ≤ 100, by parameter
};

// trace6.md §9.4 + §17.6. Works on untrusted documents (then comparable = false, no warning text).
Comparison compare_documents(const TraceDocument& baseline, const TraceDocument& candidate);

}  // namespace candle_graph
