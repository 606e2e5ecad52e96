// libFuzzer target for the baseline comparison (src/compare, comparison/1): every trace/6 file the
// reader accepts, trusted or not (compare_documents takes both), is compared with itself, and
// nothing may differ: no total, peak, span or gradient delta, every span group counted alike on
// both sides, and a trusted trace comparable with itself.
// Input: the trace/6 file.
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
#include "fuzz_support.hpp"
#include "trace_input.hpp"

namespace {

using namespace candle_graph;
using candle_graph::fuzz::fail;

bool zero_or_absent(const std::optional<double>& d) {
  return !d || *d == 0.0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const TraceDocument doc = fuzz::trace_input(data, size, fuzz::Traces::any);
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
  return 0;
}
