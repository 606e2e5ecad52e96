// The cohort model (src/bundle/cohort_comparison.hpp) on synth documents edited in memory: the
// gradient-state comparison, the identity conditions and the reasons that the CLI tests do not
// reach (several differing fields, unverified inputs, the cap on listed reasons).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "compare/cohort_comparison.hpp"
#include "compare/comparison_parts.hpp"
#include "synth/synthetic_trace.hpp"
#include "trace/document_editor.hpp"

namespace {

using namespace candle_graph;
using namespace candle_graph::compare;

TraceDocument run_doc(std::uint64_t noise_seed, double scale = 1.0, std::uint32_t layers = 8) {
  synth::SynthOptions o;
  o.layers = layers;  // layers 5, 6, 7 have zero / missing / non_finite gradients, the rest present
  o.ops_per_span = 1;
  o.jitter_percent = 3;
  o.noise_seed = noise_seed;
  o.time_scale = scale;
  o.run_id = "run-" + std::to_string(noise_seed);
  std::string text;
  synth::generate(o, [&](std::string_view bytes) { text.append(bytes); });
  return parse_trace_text(text, "synth-" + std::to_string(noise_seed));
}

std::vector<std::string> codes(const CohortComparison& c) {
  std::vector<std::string> out;
  for (const EligibilityReason& r : c.reasons) out.emplace_back(to_string(r.code));
  return out;
}

TEST(CohortComparison, GradientStateMixes) {
  CohortBuilder b;
  for (std::uint64_t i = 1; i <= 5; ++i) b.add_run(Side::baseline, run_doc(i), "b");
  for (std::uint64_t i = 11; i <= 15; ++i) {
    TraceDocument doc = run_doc(i);
    // Two candidate runs lose layer0's gradient to non_finite, one has no fact for layer1.
    if (i <= 12)
      DocumentEditor(doc).gradients()[0].state = GradientState::non_finite,
      DocumentEditor(doc).gradients()[0].norm = {};
    if (i == 13) DocumentEditor(doc).gradients().erase(doc.gradients().begin() + 1);
    b.add_run(Side::candidate, doc, "c");
  }
  const CohortComparison c = std::move(b).compare({});
  EXPECT_TRUE(c.eligible);
  ASSERT_EQ(c.gradient_changes, 2u);
  ASSERT_EQ(c.gradients.size(), 2u);
  const GradientStateChange& g0 = c.gradients[0];
  EXPECT_EQ(g0.parameter, "model/layer0.weight");
  EXPECT_EQ(g0.baseline[static_cast<std::size_t>(GradientState::present)], 5u);
  EXPECT_EQ(g0.candidate[static_cast<std::size_t>(GradientState::present)], 3u);
  EXPECT_EQ(g0.candidate[static_cast<std::size_t>(GradientState::non_finite)], 2u);
  EXPECT_TRUE(g0.baseline_mean_norm.has_value());
  const GradientStateChange& g1 = c.gradients[1];
  EXPECT_EQ(g1.parameter, "model/layer1.weight");
  EXPECT_EQ(g1.candidate[kAbsentState], 1u);
  EXPECT_EQ(g1.baseline[kAbsentState], 0u);
  // Unequal cohort sizes with the same mix are no change: 5 vs 6 runs, all present.
  CohortBuilder same;
  for (std::uint64_t i = 1; i <= 5; ++i) same.add_run(Side::baseline, run_doc(i), "b");
  for (std::uint64_t i = 11; i <= 16; ++i) same.add_run(Side::candidate, run_doc(i), "c");
  EXPECT_EQ(std::move(same).compare({}).gradient_changes, 0u);
}

// The index of the span whose name ends with `tail` (the test's synth runs have one of each).
std::size_t span_ending(const TraceDocument& doc, std::string_view tail) {
  for (std::size_t s = 0; s < doc.spans().size(); ++s)
    if (doc.spans()[s].name.ends_with(tail)) return s;
  ADD_FAILURE() << "no span ending with " << tail;
  return 0;
}

// Span keys are numbered as the runs arrive, each compared first with the previous run's key in
// step with it. Runs whose keys are out of step must still put every total under its own key: a
// run with fewer layers (keys missing), one with more (keys added), one with a layer renamed (its
// keys replaced) and one with two layers' names swapped (keys in another order). Expected: each
// key's mean per cohort, computed here from evidence::span_costs of every run (0 without the key).
TEST(CohortComparison, SpanTotalsStayWithTheirKeysInAnyOrder) {
  std::vector<TraceDocument> base, cand;
  for (std::uint64_t i = 1; i <= 5; ++i) base.push_back(run_doc(i, 1.0, i == 2 ? 6 : 8));
  for (std::uint64_t i = 11; i <= 15; ++i) cand.push_back(run_doc(i, 1.1, i == 12 ? 10 : 8));
  DocumentEditor(base[3]).spans()[span_ending(base[3], "/forward/layer3")].name = "renamed";
  auto& swapped = DocumentEditor(cand[3]).spans();
  std::swap(swapped[span_ending(cand[3], "/forward/layer1")].name,
            swapped[span_ending(cand[3], "/forward/layer4")].name);

  CohortBuilder b;
  for (const TraceDocument& d : base) b.add_run(Side::baseline, d, "b");
  for (const TraceDocument& d : cand) b.add_run(Side::candidate, d, "c");
  CohortOptions options;
  options.bootstrap.resamples = 0;  // the means alone
  const CohortComparison c = std::move(b).compare(options);

  std::map<std::string, std::pair<double, double>> sums;  // key → (baseline, candidate) sums
  std::map<std::string, std::pair<std::size_t, std::size_t>> with;
  for (const TraceDocument& d : base)
    for (const auto& [key, cost] : evidence::span_costs(d))
      sums[key].first += static_cast<double>(cost.total_ns), ++with[key].first;
  for (const TraceDocument& d : cand)
    for (const auto& [key, cost] : evidence::span_costs(d))
      sums[key].second += static_cast<double>(cost.total_ns), ++with[key].second;
  EXPECT_EQ(c.span_keys, sums.size());
  ASSERT_EQ(c.spans.size(), std::min<std::size_t>(sums.size(), options.max_spans));
  ASSERT_GT(c.spans.size(), 20u);
  for (const SpanDelta& s : c.spans) {
    SCOPED_TRACE(s.name);
    ASSERT_TRUE(sums.count(s.name));
    EXPECT_DOUBLE_EQ(s.estimate.baseline_mean, sums[s.name].first / 5);
    EXPECT_DOUBLE_EQ(s.estimate.candidate_mean, sums[s.name].second / 5);
    EXPECT_EQ(s.baseline_runs_with, with[s.name].first);
    EXPECT_EQ(s.candidate_runs_with, with[s.name].second);
  }
}

TEST(CohortComparison, EachDifferingConditionIsOneReason) {
  CohortBuilder b;
  for (std::uint64_t i = 1; i <= 5; ++i) b.add_run(Side::baseline, run_doc(i), "b");
  for (std::uint64_t i = 11; i <= 15; ++i) {
    TraceDocument doc = run_doc(i);
    if (i == 12) DocumentEditor(doc).run().device = "cuda:0";
    if (i >= 14) DocumentEditor(doc).run().warmup_steps = 5;
    if (i == 15) DocumentEditor(doc).run().timing_mode = TimingMode::device_synchronized;
    b.add_run(Side::candidate, doc, "c" + std::to_string(i));
  }
  b.add_unverified(Side::candidate, "bundle-x", "bundle.json: hash mismatch");
  const CohortComparison c = std::move(b).compare({});
  EXPECT_FALSE(c.eligible);
  EXPECT_EQ(codes(c),
            (std::vector<std::string>{"unverified_inputs", "identity_conditions_differ",
                                      "identity_conditions_differ", "identity_conditions_differ"}));
  EXPECT_NE(c.reasons[0].message.find("bundle-x (candidate)"), std::string::npos);
  EXPECT_NE(c.reasons[1].message.find("device differs: `cpu`"), std::string::npos);
  EXPECT_NE(c.reasons[1].message.find("`cuda:0` in c12"), std::string::npos);
  EXPECT_NE(c.reasons[2].message.find("timing mode"), std::string::npos);
  EXPECT_NE(c.reasons[3].message.find("warmup differs: `2`"), std::string::npos);
  EXPECT_NE(c.reasons[3].message.find("2 of 10 runs"), std::string::npos);
  EXPECT_EQ(c.verdict, Direction::inconclusive);
  EXPECT_EQ(c.candidate.size(), 5u);  // the unverified input is not a run
}

TEST(CohortComparison, ReasonsAreCappedPerCode) {
  CohortBuilder b;
  for (int i = 0; i < 14; ++i) b.add_unverified(Side::baseline, "d" + std::to_string(i), "x");
  const CohortComparison c = std::move(b).compare({});
  // 10 listed + "and 4 more", then the two insufficient_runs (0 runs a side).
  ASSERT_EQ(c.reasons.size(), 13u);
  EXPECT_EQ(c.reasons[10].code, EligibilityCode::insufficient_runs);
  EXPECT_EQ(c.reasons[12].message, "and 4 more of this kind");
  EXPECT_EQ(c.reasons[12].code, EligibilityCode::unverified_inputs);
  EXPECT_TRUE(c.spans.empty());
}

}  // namespace
