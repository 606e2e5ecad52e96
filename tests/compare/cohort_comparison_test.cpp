// The cohort model (src/bundle/cohort_comparison.hpp) on synth documents edited in memory: the
// gradient-state comparison, the identity conditions and the reasons that the CLI tests do not
// reach (several differing fields, unverified inputs, the cap on listed reasons).
#include <gtest/gtest.h>

#include "compare/cohort_comparison.hpp"
#include "synth/synthetic_trace.hpp"
#include "trace/document_editor.hpp"

namespace {

using namespace candle_graph;
using namespace candle_graph::compare;

TraceDocument run_doc(std::uint64_t noise_seed, double scale = 1.0) {
  synth::SynthOptions o;
  o.layers = 8;  // layers 5, 6, 7 have zero / missing / non_finite gradients, the rest present
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
