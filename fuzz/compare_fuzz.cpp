// libFuzzer target for the baseline comparison (src/compare, comparison/1):
//   - every trace/6 file the reader accepts, trusted or not (compare_documents takes both), is
//     compared with itself, and nothing may differ: no total, peak, span or gradient delta, every
//     span group counted alike on both sides, and a trusted trace comparable with itself;
//   - the input's two halves, each a trace or the recipe of one, are compared both ways: the
//     total's delta is the difference of the measured spans' durations summed here from the
//     documents, and swapping the sides swaps every count, total, mean, peak, state and norm and
//     negates every delta, with the same span groups in the same order and the same verdict.
// Input: the trace/6 file, or two traces' recipes (generated_trace.hpp).
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "candle_graph/comparison.hpp"
#include "candle_graph/error.hpp"
#include "candle_graph/health.hpp"
#include "candle_graph/trace.hpp"
#include "events/saturating.hpp"
#include "fuzz_support.hpp"
#include "trace_input.hpp"

namespace {

using namespace candle_graph;
using candle_graph::fuzz::fail;
using candle_graph::fuzz::law;

bool zero_or_absent(const std::optional<double>& d) {
  return !d || *d == 0.0;
}

void compare_with_itself(const TraceDocument& doc) {
  const Comparison c = compare_documents(doc, doc);
  if (analyze_health(doc).trusted && !c.comparable) fail("a trusted trace is not comparable", "");
  if (c.total_delta_ns != 0 || !zero_or_absent(c.total_delta_percent))
    fail("a trace's total differs from its own", std::to_string(c.total_delta_ns));
  if (c.peak_delta_bytes != 0 || c.baseline_peak_bytes != c.candidate_peak_bytes)
    fail("a trace's peak differs from its own", std::to_string(c.peak_delta_bytes));
  for (const SpanComparison& s : c.spans)
    if (s.delta_ns != 0 || !zero_or_absent(s.delta_percent) ||
        s.baseline_count != s.candidate_count || s.baseline_total_ns != s.candidate_total_ns ||
        s.baseline_mean_ns != s.candidate_mean_ns)
      fail("a span group differs from its own", s.name);
  for (const GradientComparison& g : c.gradients)
    if (g.baseline_state != g.candidate_state || !zero_or_absent(g.norm_delta))
      fail("a gradient differs from its own", g.parameter);
}

// The measured spans' durations summed, saturating (trace6.md §9.4's total).
std::uint64_t measured_total(const TraceDocument& doc) {
  std::uint64_t total = 0;
  for (const SpanRecord& s : doc.spans())
    if (s.measured) total = sat_add(total, s.duration_ns);
  return total;
}

// candidate − baseline in 128 bits, clamped to i64 as the comparison's deltas are.
std::int64_t clamped_difference(std::uint64_t candidate, std::uint64_t baseline) {
  const __int128 d = static_cast<__int128>(candidate) - static_cast<__int128>(baseline);
  return static_cast<std::int64_t>(std::clamp<__int128>(d, INT64_MIN, INT64_MAX));
}

// A delta and its mirror: negated, unless clamping at INT64_MIN kept it from being.
bool negated(std::int64_t forward, std::int64_t backward) {
  if (forward == INT64_MIN || backward == INT64_MIN)
    return (forward == INT64_MIN && backward == INT64_MAX) ||
           (backward == INT64_MIN && forward == INT64_MAX);
  return forward == -backward;
}

// Norms and their deltas compare as written: NaN against NaN is the same value here.
bool same_norm(const std::optional<double>& a, const std::optional<double>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || *a == *b || (std::isnan(*a) && std::isnan(*b));
}

bool mirrored_norm_delta(const std::optional<double>& forward,
                         const std::optional<double>& backward) {
  return same_norm(forward, backward ? std::optional<double>(-*backward) : std::nullopt);
}

void check_mirrored_spans(const Comparison& ab, const Comparison& ba) {
  if (ab.spans.size() != ba.spans.size())
    fail("the span groups differ with the sides swapped", std::to_string(ab.spans.size()));
  for (std::size_t i = 0; i < ab.spans.size(); ++i) {
    const SpanComparison& f = ab.spans[i];
    const SpanComparison& b = ba.spans[i];
    if (f.name != b.name || f.baseline_count != b.candidate_count ||
        f.candidate_count != b.baseline_count || f.baseline_total_ns != b.candidate_total_ns ||
        f.candidate_total_ns != b.baseline_total_ns || f.baseline_mean_ns != b.candidate_mean_ns ||
        f.candidate_mean_ns != b.baseline_mean_ns || !negated(f.delta_ns, b.delta_ns))
      fail("a span group is not its mirror with the sides swapped", f.name + " / " + b.name);
    law(f.delta_ns == clamped_difference(f.candidate_total_ns, f.baseline_total_ns),
        "a span group's delta is not its totals' difference", f.candidate_total_ns,
        f.baseline_total_ns);
  }
}

void check_mirrored_gradients(const Comparison& ab, const Comparison& ba) {
  if (ab.gradients.size() != ba.gradients.size())
    fail("the gradients differ with the sides swapped", std::to_string(ab.gradients.size()));
  for (std::size_t i = 0; i < ab.gradients.size(); ++i) {
    const GradientComparison& f = ab.gradients[i];
    const GradientComparison& b = ba.gradients[i];
    if (f.parameter != b.parameter || f.baseline_state != b.candidate_state ||
        f.candidate_state != b.baseline_state || !same_norm(f.baseline_norm, b.candidate_norm) ||
        !same_norm(f.candidate_norm, b.baseline_norm) ||
        !mirrored_norm_delta(f.norm_delta, b.norm_delta))
      fail("a gradient is not its mirror with the sides swapped", f.parameter);
  }
}

void compare_both_ways(const TraceDocument& a, const TraceDocument& b) {
  const Comparison ab = compare_documents(a, b);
  const Comparison ba = compare_documents(b, a);
  const std::uint64_t total_a = measured_total(a), total_b = measured_total(b);
  law(ab.total_delta_ns == clamped_difference(total_b, total_a),
      "the total's delta is not the measured spans' difference", total_b, total_a);
  if (!negated(ab.total_delta_ns, ba.total_delta_ns))
    fail("the total's delta is not negated with the sides swapped",
         std::to_string(ab.total_delta_ns) + " and " + std::to_string(ba.total_delta_ns));
  if (ab.comparable != ba.comparable || ab.warnings.size() != ba.warnings.size())
    fail("the verdict depends on which side is the baseline",
         std::to_string(ab.warnings.size()) + " and " + std::to_string(ba.warnings.size()));
  law(ab.baseline_peak_bytes == ba.candidate_peak_bytes &&
          ab.candidate_peak_bytes == ba.baseline_peak_bytes &&
          negated(ab.peak_delta_bytes, ba.peak_delta_bytes),
      "the peaks are not swapped with the sides", ab.baseline_peak_bytes, ba.candidate_peak_bytes);
  check_mirrored_spans(ab, ba);
  check_mirrored_gradients(ab, ba);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  compare_with_itself(fuzz::trace_input(data, size, fuzz::Traces::any));
  const std::size_t half = size / 2;
  compare_both_ways(fuzz::trace_input(data, half, fuzz::Traces::any),
                    fuzz::trace_input(data + half, size - half, fuzz::Traces::any));
  return 0;
}
