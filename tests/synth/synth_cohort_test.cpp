// synth's cohort options: --time-scale, --jitter/--noise-seed, --run-id and --tag
// change the timings and the identity of a run and nothing else; the defaults keep the bytes
// (tests/trace/synth_test.cpp pins those).
#include <gtest/gtest.h>

#include "candle_graph/health.hpp"
#include "compare/comparison_parts.hpp"
#include "synth/synthetic_trace.hpp"

namespace {

using namespace candle_graph;

TraceDocument synth_doc(const synth::SynthOptions& o) {
  std::string text;
  synth::generate(o, [&](std::string_view bytes) { text.append(bytes); });
  return parse_trace_text(text, "synth");
}

synth::SynthOptions small() {
  synth::SynthOptions o;
  o.layers = 5;
  o.ops_per_span = 3;
  return o;
}

TEST(SynthCohort, TimeScaleScalesEveryDuration) {
  const TraceDocument base = synth_doc(small());
  synth::SynthOptions o = small();
  o.time_scale = 1.1;
  const TraceDocument slow = synth_doc(o);
  ASSERT_EQ(base.spans().size(), slow.spans().size());
  ASSERT_EQ(base.ops().size(), slow.ops().size());
  EXPECT_TRUE(analyze_health(slow).trusted);
  // Each drawn duration is rounded to the ns after scaling, so a span's duration is 1.1× within
  // one ns per duration it covers.
  for (std::size_t i = 0; i < base.ops().size(); ++i)
    EXPECT_NEAR(static_cast<double>(slow.ops()[i].duration_ns),
                1.1 * static_cast<double>(base.ops()[i].duration_ns), 1.0);
  const double b = static_cast<double>(evidence::measured_total(base));
  const double s = static_cast<double>(evidence::measured_total(slow));
  EXPECT_NEAR(s / b, 1.1, 1e-4);
  // Same structure, same run id and tags: another run of the same workload.
  EXPECT_EQ(base.run().run_id, slow.run().run_id);
  EXPECT_TRUE(std::equal(base.run().tags.begin(), base.run().tags.end(), slow.run().tags.begin(),
                         slow.run().tags.end()));
}

TEST(SynthCohort, JitterIsSeededPerRun) {
  synth::SynthOptions o = small();
  o.jitter_percent = 5;
  o.noise_seed = 1;
  const std::uint64_t a = evidence::measured_total(synth_doc(o));
  const std::uint64_t a2 = evidence::measured_total(synth_doc(o));
  o.noise_seed = 2;
  const std::uint64_t b = evidence::measured_total(synth_doc(o));
  EXPECT_EQ(a, a2);
  EXPECT_NE(a, b);
  const std::uint64_t plain = evidence::measured_total(synth_doc(small()));
  // sigma 5 %: a run factor beyond ±30 % would be a 6-sigma draw.
  EXPECT_NEAR(static_cast<double>(a) / static_cast<double>(plain), 1.0, 0.3);
  EXPECT_NE(a, plain);
}

TEST(SynthCohort, RunIdAndTags) {
  synth::SynthOptions o = small();
  o.run_id = "cand-3";
  o.tags = {{"pair_id", "3"}, {"build_id", "abc"}};
  const TraceDocument doc = synth_doc(o);
  EXPECT_EQ(doc.run().run_id, "cand-3");
  std::vector<std::string> keys;
  for (const Tag& t : doc.run().tags) keys.emplace_back(t.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"build_id", "generator", "layers", "ops_per_span",
                                            "pair_id", "seed"}));
  o.tags = {{"seed", "9"}};
  EXPECT_THROW(synth_doc(o), Error);
  o.tags = {};
  o.time_scale = 0;
  EXPECT_THROW(synth_doc(o), Error);
}

}  // namespace
