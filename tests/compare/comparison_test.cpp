// trace6.md §9.4 / §17.6 comparison: §14 checklist item, warnings, caps and key format.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "candle_graph/analysis.hpp"
#include "support/evidence_helpers.hpp"

using namespace candle_graph;

namespace {

// session (root) → update (measured, `total` ns) → forward (step forward) + gradient(s).
std::string body(std::uint64_t total, double norm) {
  return R"({"kind":"span_start","id":"s1","name":"session","start_ns":0,"span_kind":"function"}
{"kind":"span_start","id":"s2","parent_id":"s1","name":"update","start_ns":0,"span_kind":"function","measured":true}
{"kind":"span_start","id":"s3","parent_id":"s2","name":"forward","start_ns":0,"span_kind":"function","step":"forward"}
{"kind":"span_end","id":"s3","duration_ns":10}
{"kind":"span_end","id":"s2","duration_ns":)" +
         std::to_string(total) + R"(}
{"kind":"gradient","event_id":"gradient-1","root":"vb","key":"w","state":"present","norm":)" +
         std::to_string(norm) + R"(}
{"kind":"span_end","id":"s1","duration_ns":1000}
)";
}

TraceDocument doc(const std::string& text, const std::string& meta = "{}") {
  return parse_trace_text(cg_test::meta_line(meta) + text, "<test>");
}

TEST(Comparison, ChecklistTotalsKeysAndGradients) {
  const TraceDocument b = doc(body(100, 1.0)), c = doc(body(80, 2.0));
  const Comparison cmp = compare_documents(b, c);
  EXPECT_TRUE(cmp.comparable);
  EXPECT_TRUE(cmp.warnings.empty());
  EXPECT_EQ(cmp.total_delta_ns, -20);
  ASSERT_TRUE(cmp.total_delta_percent);
  EXPECT_EQ(*cmp.total_delta_percent, -20.0);  // (80 − 100) · 100 / 100
  // Keys: measured subtree only (not the root envelope); root path + kind + Debug step.
  ASSERT_EQ(cmp.spans.size(), 2u);
  EXPECT_EQ(cmp.spans[0].name, "session/update [function]");  // |−20| sorts first
  EXPECT_EQ(cmp.spans[0].delta_ns, -20);
  EXPECT_EQ(cmp.spans[1].name, "session/update/forward [function]/Forward");
  EXPECT_EQ(cmp.spans[1].delta_ns, 0);
  EXPECT_EQ(*cmp.spans[1].delta_percent, 0.0);
  ASSERT_EQ(cmp.gradients.size(), 1u);
  EXPECT_EQ(cmp.gradients[0].parameter, "vb/w");
  EXPECT_EQ(*cmp.gradients[0].norm_delta, 1.0);
}

// A key is counted once per span: two sibling spans of one name share it (counts and totals
// add), and a span below them is keyed by the full path of names. Worked by hand from the text.
TEST(Comparison, SameNamedSiblingsShareTheirKey) {
  const std::string text =
      R"({"kind":"span_start","id":"s1","name":"session","start_ns":0,"span_kind":"function"}
{"kind":"span_start","id":"s2","parent_id":"s1","name":"update","start_ns":0,"span_kind":"function","measured":true}
{"kind":"span_start","id":"s3","parent_id":"s2","name":"block","start_ns":0,"span_kind":"module"}
{"kind":"span_start","id":"s4","parent_id":"s3","name":"inner","start_ns":0,"span_kind":"module"}
{"kind":"span_end","id":"s4","duration_ns":3}
{"kind":"span_end","id":"s3","duration_ns":10}
{"kind":"span_start","id":"s5","parent_id":"s2","name":"block","start_ns":20,"span_kind":"module"}
{"kind":"span_end","id":"s5","duration_ns":7}
{"kind":"span_end","id":"s2","duration_ns":40}
{"kind":"span_end","id":"s1","duration_ns":1000}
)";
  const TraceDocument d = doc(text);
  const Comparison cmp = compare_documents(d, d);
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> keys;  // count, total
  for (const SpanComparison& s : cmp.spans) keys[s.name] = {s.baseline_count, s.baseline_total_ns};
  const std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> want = {
      {"session/update [function]", {1, 40}},
      {"session/update/block [module]", {2, 17}},
      {"session/update/block/inner [module]", {1, 3}}};
  EXPECT_EQ(keys, want);
}

// Root paths where the parent chain is not a tree, worked by hand: a root with an empty name
// (its child's path starts with the separator), a parent that does not exist (the walk stops
// there) and two spans that are each other's parent (each walks the cycle once, from itself).
TEST(Comparison, KeysOfBrokenParentChainsAreTheNamesWalked) {
  const std::string text =
      R"({"kind":"span_start","id":"s1","name":"","start_ns":0,"span_kind":"function","measured":true}
{"kind":"span_start","id":"s2","parent_id":"s1","name":"a","start_ns":1,"span_kind":"function","measured":true}
{"kind":"span_start","id":"s4","parent_id":"s9","name":"orphan","start_ns":1,"span_kind":"module","measured":true}
{"kind":"span_start","id":"s5","parent_id":"s6","name":"c1","start_ns":1,"span_kind":"module","measured":true}
{"kind":"span_start","id":"s6","parent_id":"s5","name":"c2","start_ns":1,"span_kind":"module","measured":true}
{"kind":"span_end","id":"s6","duration_ns":3}
{"kind":"span_end","id":"s5","duration_ns":4}
{"kind":"span_end","id":"s4","duration_ns":5}
{"kind":"span_end","id":"s2","duration_ns":6}
{"kind":"span_end","id":"s1","duration_ns":10}
)";
  const TraceDocument d = doc(text);
  std::map<std::string, std::uint64_t> totals;
  for (const SpanComparison& s : compare_documents(d, d).spans)
    totals[s.name] = s.baseline_total_ns;
  const std::map<std::string, std::uint64_t> want = {{" [function]", 10},
                                                     {"/a [function]", 6},
                                                     {"orphan [module]", 5},
                                                     {"c2/c1 [module]", 4},
                                                     {"c1/c2 [module]", 3}};
  EXPECT_EQ(totals, want);
}

TEST(Comparison, SpecExampleKeyAndSelfComparison) {
  const TraceDocument d = cg_test::load_fixture("spec_example.jsonl");
  const Comparison cmp = compare_documents(d, d);
  bool found = false;
  for (const SpanComparison& s : cmp.spans)
    found |= s.name ==
             "demo::train::update/demo/update-000000000001/demo/update-000000000001/forward "
             "[function]/Forward";
  EXPECT_TRUE(found);
  EXPECT_EQ(*cmp.total_delta_percent, 0.0);  // trace6.md §17.9
  EXPECT_TRUE(cmp.gradients.empty());
  EXPECT_EQ(cmp.baseline_peak_bytes, 10240u);
  EXPECT_EQ(cmp.peak_delta_bytes, 0);
}

TEST(Comparison, WarningsInOrderAndDescriptiveTagsOnlyWarn) {
  const TraceDocument b = doc(body(100, 1.0), R"({"tags":{"batch":"8","source_revision":"a"}})");
  const TraceDocument c = doc(body(100, 1.0), R"({"device":"cuda:0","timing_mode":
      "device_synchronized","measured_region_device_synchronized":true,"warmup_steps":2,
      "tags":{"batch":"16","source_revision":"b"}})");
  const Comparison cmp = compare_documents(b, c);
  EXPECT_FALSE(cmp.comparable);
  EXPECT_EQ(cmp.warnings,
            (std::vector<std::string>{
                "device differs: `cpu` vs `cuda:0`", "timing mode differs",
                "measured-region device synchronization differs", "warmup differs: 0 vs 2",
                "workload tags differ; batch/model/precision conditions must match",
                "descriptive `source_revision` differs, as expected for a code-change "
                "comparison"}));
  // Only a descriptive tag differs: still comparable, one warning.
  const TraceDocument c2 = doc(body(100, 1.0), R"({"tags":{"batch":"8","source_revision":"z"}})");
  const Comparison cmp2 = compare_documents(b, c2);
  EXPECT_TRUE(cmp2.comparable);
  EXPECT_EQ(cmp2.warnings.size(), 1u);
}

TEST(Comparison, UntrustedInputIsNotComparableWithoutWarning) {
  const TraceDocument b = doc(body(100, 1.0));
  const TraceDocument open = doc(
      R"({"kind":"span_start","id":"s1","name":"session","start_ns":0,"span_kind":"function","measured":true}
)");
  const Comparison cmp = compare_documents(b, open);
  EXPECT_FALSE(cmp.comparable);
  EXPECT_TRUE(cmp.warnings.empty());
  // The open measured span counts with duration 0: 0 − 100.
  EXPECT_EQ(cmp.total_delta_ns, -100);
}

TEST(Comparison, BaselineZeroGivesNullPercent) {
  const Comparison cmp = compare_documents(doc(body(0, 1.0)), doc(body(50, 1.0)));
  EXPECT_FALSE(cmp.total_delta_percent.has_value());
  EXPECT_EQ(cmp.total_delta_ns, 50);
}

TEST(Comparison, CapsFiftySpansAndHundredGradients) {
  // Candidate: 60 distinct measured children (durations 1..60) and 120 gradients absent from
  // the baseline. Spans are capped at 50 (largest |delta| first: 60 ns child first), gradients
  // at 100 (sorted by key: g000..g099).
  std::string cand =
      R"({"kind":"span_start","id":"s1","name":"session","start_ns":0,"span_kind":"function","measured":true}
)";
  for (int i = 1; i <= 60; ++i) {
    cand += R"({"kind":"span_start","id":"c)" + std::to_string(i) +
            R"(","parent_id":"s1","name":"child)" + std::to_string(i) +
            R"(","start_ns":0,"span_kind":"function"}
{"kind":"span_end","id":"c)" +
            std::to_string(i) + R"(","duration_ns":)" + std::to_string(i) + "}\n";
  }
  for (int i = 0; i < 120; ++i) {
    char key[8];
    std::snprintf(key, sizeof key, "g%03d", i);
    cand += R"({"kind":"gradient","event_id":"gradient-)" + std::to_string(i + 1) +
            R"(","root":"vb","key":")" + key + R"(","state":"missing"}
)";
  }
  cand += R"({"kind":"span_end","id":"s1","duration_ns":100000}
)";
  const TraceDocument base = doc(
      R"({"kind":"span_start","id":"s1","name":"session","start_ns":0,"span_kind":"function","measured":true}
{"kind":"span_end","id":"s1","duration_ns":100000}
)");
  const Comparison cmp = compare_documents(base, doc(cand));
  ASSERT_EQ(cmp.spans.size(), 50u);
  EXPECT_EQ(cmp.spans[0].name, "session/child60 [function]");
  EXPECT_EQ(cmp.spans[0].baseline_count, 0u);
  EXPECT_FALSE(cmp.spans[0].delta_percent.has_value());
  ASSERT_EQ(cmp.gradients.size(), 100u);
  EXPECT_EQ(cmp.gradients.back().parameter, "vb/g099");
  EXPECT_FALSE(cmp.gradients[0].baseline_state.has_value());
  EXPECT_EQ(*cmp.gradients[0].candidate_state, GradientState::missing);
}

// Span groups are ordered by how far apart their totals are, exactly, whichever side is the
// baseline. Worked by hand: group a goes 0 → 2^63 ns, group b 2^63 + 5 → 5 ns; both differ by
// 2^63. Their deltas clamp to i64 (a: +2^63 − 1, b: −2^63), and ordered by the clamped deltas'
// magnitudes b came first one way and a the other; by the totals' distance they tie and keep the
// key order (a, b) both ways.
TEST(Comparison, SpanGroupOrderDoesNotDependOnWhichSideIsTheBaseline) {
  auto trace = [](const std::string& a_ns, const std::string& b_ns) {
    return doc(
        R"({"kind":"span_start","id":"s1","name":"session","start_ns":0,"span_kind":"function","measured":true}
{"kind":"span_start","id":"s2","parent_id":"s1","name":"a","start_ns":0,"span_kind":"function"}
{"kind":"span_end","id":"s2","duration_ns":)" +
        a_ns + R"(}
{"kind":"span_start","id":"s3","parent_id":"s1","name":"b","start_ns":0,"span_kind":"function"}
{"kind":"span_end","id":"s3","duration_ns":)" +
        b_ns + R"(}
{"kind":"span_end","id":"s1","duration_ns":18446744073709551615}
)");
  };
  const TraceDocument base = trace("0", "9223372036854775813");
  const TraceDocument cand = trace("9223372036854775808", "5");
  for (const Comparison& cmp : {compare_documents(base, cand), compare_documents(cand, base)}) {
    ASSERT_EQ(cmp.spans.size(), 3u);
    EXPECT_EQ(cmp.spans[0].name, "session/a [function]");
    EXPECT_EQ(cmp.spans[1].name, "session/b [function]");
    EXPECT_EQ(cmp.spans[2].name, "session [function]");  // no change
  }
}

// A PyTorch profiler trace read as found names its root after its file and its region after the
// step (docs/format/pytorch.md). Two such traces of one workload: the keys start at the region,
// `ProfilerStep#N` read as `ProfilerStep`, and the file names only warn. The expected keys are
// written by hand from the text.
std::string profiler_body(const std::string& file, const std::string& region) {
  return R"({"kind":"span_start","id":"s1","name":")" + file +
         R"(","start_ns":0,"span_kind":"function"}
{"kind":"span_start","id":"s2","parent_id":"s1","name":")" +
         region + R"(","start_ns":0,"span_kind":"function","measured":true}
{"kind":"span_start","id":"s3","parent_id":"s2","name":"## forward ##","start_ns":0,"span_kind":"function","step":"forward"}
{"kind":"span_end","id":"s3","duration_ns":10}
{"kind":"span_end","id":"s2","duration_ns":40}
{"kind":"span_end","id":"s1","duration_ns":40}
)";
}

std::string profiler_meta(const std::string& file, const std::string& format,
                          const std::string& more_tags = "") {
  return R"({"entrypoint":")" + file + R"(","tags":{"source.format":")" + format + "\"" +
         more_tags + "}}";
}

std::vector<std::string> key_names(const Comparison& cmp) {
  std::vector<std::string> names;
  for (const SpanComparison& s : cmp.spans) names.push_back(s.name);
  std::sort(names.begin(), names.end());
  return names;
}

TEST(Comparison, ProfilerTracesReadAsFoundAreKeyedFromTheirRegion) {
  for (const std::string format : {"kineto", "legacy-autograd-profiler"}) {
    const TraceDocument b =
        doc(profiler_body("host_1.100", "ProfilerStep#12"), profiler_meta("host_1.100", format));
    const TraceDocument c =
        doc(profiler_body("host_2.200", "ProfilerStep#7"), profiler_meta("host_2.200", format));
    const Comparison cmp = compare_documents(b, c);
    EXPECT_TRUE(cmp.comparable) << format;
    EXPECT_EQ(cmp.warnings, (std::vector<std::string>{
                                "entrypoint not compared: `host_1.100` vs `host_2.200` name the "
                                "PyTorch profiler traces' files"}));
    EXPECT_EQ(key_names(cmp),
              (std::vector<std::string>{"ProfilerStep [function]",
                                        "ProfilerStep/## forward ## [function]/Forward"}));
    for (const SpanComparison& s : cmp.spans) {
      EXPECT_EQ(s.baseline_count, 1u) << s.name;
      EXPECT_EQ(s.candidate_count, 1u) << s.name;
    }
  }
  // The converter's other regions keep their names; so does a step name that is not a number.
  for (const std::string region :
       {"all profiler steps", "profiled window", "ProfilerStep#", "ProfilerStep#1x"}) {
    const TraceDocument d = doc(profiler_body("f", region), profiler_meta("f", "kineto"));
    EXPECT_EQ(key_names(compare_documents(d, d)),
              (std::vector<std::string>{region + " [function]",
                                        region + "/## forward ## [function]/Forward"}));
  }
}

// What the two traces measured must agree: one step against every step is not a comparison.
TEST(Comparison, ProfilerTracesOfDifferentRegionsAreNotComparable) {
  const TraceDocument step =
      doc(profiler_body("a", "ProfilerStep#3"), profiler_meta("a", "kineto"));
  const TraceDocument all =
      doc(profiler_body("b", "all profiler steps"), profiler_meta("b", "kineto"));
  const Comparison cmp = compare_documents(step, all);
  EXPECT_FALSE(cmp.comparable);
  EXPECT_EQ(cmp.warnings,
            (std::vector<std::string>{
                "entrypoint not compared: `a` vs `b` name the PyTorch profiler traces' files",
                "measured region differs: `ProfilerStep` vs `all profiler steps`"}));
  // Another step of the same kind is the same region.
  const TraceDocument other =
      doc(profiler_body("a", "ProfilerStep#4"), profiler_meta("a", "kineto"));
  EXPECT_TRUE(compare_documents(step, other).comparable);
}

// Entrypoints that are the run's own keep trace6.md §9.4's root paths and comparison: a trace/6
// capture, a capture by the profiler engine (`capture.profiler`), our Chrome export read back, a
// file with the tag but two measured spans, and a profiler trace against a capture.
TEST(Comparison, OtherTracesKeepTheirRootPathsAndEntrypoints) {
  const std::vector<std::pair<std::string, std::string>> metas = {
      {"f", "{}"},
      {"f", profiler_meta("f", "legacy-autograd-profiler", R"(,"capture.profiler":"legacy")")},
      {"f", profiler_meta("f", "candle-graph-chrome")}};
  for (const auto& [file, meta] : metas) {
    const TraceDocument d = doc(profiler_body(file, "ProfilerStep#3"), meta);
    EXPECT_EQ(key_names(compare_documents(d, d)),
              (std::vector<std::string>{"f/ProfilerStep#3 [function]",
                                        "f/ProfilerStep#3/## forward ## [function]/Forward"}))
        << meta;
  }
  const std::string two_measured =
      R"({"kind":"span_start","id":"s1","name":"f","start_ns":0,"span_kind":"function","measured":true}
{"kind":"span_start","id":"s2","parent_id":"s1","name":"ProfilerStep#3","start_ns":0,"span_kind":"function","measured":true}
{"kind":"span_end","id":"s2","duration_ns":40}
{"kind":"span_end","id":"s1","duration_ns":40}
)";
  const TraceDocument d = doc(two_measured, profiler_meta("f", "kineto"));
  EXPECT_EQ(key_names(compare_documents(d, d)),
            (std::vector<std::string>{"f [function]", "f/ProfilerStep#3 [function]"}));
  const Comparison mixed = compare_documents(
      doc(profiler_body("f", "ProfilerStep#3"), profiler_meta("f", "kineto")),
      doc(profiler_body("g", "ProfilerStep#3"), R"({"entrypoint":"g","tags":{}})"));
  EXPECT_FALSE(mixed.comparable);
  EXPECT_EQ(mixed.warnings, (std::vector<std::string>{"entrypoint differs: `f` vs `g`"}));
}

// A trace that names its GPU's model (`source.device_name`, from Kineto's deviceProperties) is
// held to the device's kind and model when the other names one too; otherwise to the device as
// written. The expected texts are written by hand from the rule.
TEST(Comparison, NamedGpuModelsReplaceTheDeviceIndex) {
  const auto on = [](const std::string& device, const std::string& model) {
    const std::string tag = model.empty() ? "" : R"(,"source.device_name":")" + model + "\"";
    return R"({"device":")" + device + R"(","tags":{"source.format":"kineto")" + tag + "}}";
  };
  struct Case {
    std::string b, c;  // meta lines
    bool comparable;
    std::string warning;  // empty: none
  };
  const std::vector<Case> cases = {
      {on("cuda:0", "V100"), on("cuda:1", "V100"), true,
       "device index not compared: `cuda:0` vs `cuda:1` are both `V100`"},
      {on("cuda:0", "V100"), on("cuda:0", "A100"), false,
       "device differs: `cuda:0 (V100)` vs `cuda:0 (A100)`"},
      {on("cuda:0", "V100"), on("cuda:1", ""), false,
       "device differs: `cuda:0 (V100)` vs `cuda:1`"},
      {on("cuda:0", "V100"), on("cuda:0", ""), true, ""},
      {on("cuda:0", ""), on("cuda:1", ""), false, "device differs: `cuda:0` vs `cuda:1`"},
      {on("cuda:0", "V100"), on("hip:0", "V100"), false,
       "device differs: `cuda:0 (V100)` vs `hip:0 (V100)`"},
      // A tag no importer writes (a control character, over 256 bytes) names no model: the
      // index is held as for a trace without the tag, even where both tags are alike.
      {on("cuda:0", "V100"), on("cuda:1", R"(V100\u0007)"), false,
       "device differs: `cuda:0 (V100)` vs `cuda:1`"},
      {on("cuda:0", std::string(257, 'x')), on("cuda:1", std::string(257, 'x')), false,
       "device differs: `cuda:0` vs `cuda:1`"},
  };
  for (const Case& k : cases) {
    const Comparison cmp = compare_documents(doc(body(100, 1.0), k.b), doc(body(100, 1.0), k.c));
    EXPECT_EQ(cmp.comparable, k.comparable) << k.b << " " << k.c;
    EXPECT_EQ(cmp.warnings,
              k.warning.empty() ? std::vector<std::string>{} : std::vector<std::string>{k.warning});
  }
}

}  // namespace
