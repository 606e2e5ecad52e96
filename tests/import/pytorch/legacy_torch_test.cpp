// Legacy autograd-profiler traces written in the test by Debian's /usr/bin/python3 with
// python3-torch 1.13 (a small MLP with forward/backward/optimizer record_function ranges and a
// small CNN with module-level ranges, both under torch.profiler.schedule + prof.step()). One
// python process writes both traces and, from the JSON PyTorch wrote, the number of events of
// each step (tests/fixtures/pytorch/make_legacy_traces.py). Release pass only: skipped under the
// sanitizers (torch's start costs seconds and its libraries are not instrumented).
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "candle_graph/comparison.hpp"

#include "support/convert_helpers.hpp"
#include "support/run_program.hpp"
#include "support/sanitizers.hpp"

namespace cgimport {
namespace {

// One test (not a fixture with several): ctest runs every test in its own process, and torch's
// start costs seconds, so one python process writes everything this test checks.
struct LegacyTraces {
  TempDir dir{"cg-legacy-torch"};
  nlohmann::json expected;
};

[[maybe_unused]] void check_mlp(const LegacyTraces& t) {
  SCOPED_TRACE("mlp");
  const nlohmann::json& e = t.expected["mlp"];
  ASSERT_EQ(e["steps"].size(), 3u);  // schedule(active=3)
  std::string last;
  for (const auto& [n, ops] : e["steps"].items()) {
    if (last.empty() || std::stoull(n) > std::stoull(last)) last = n;
  }
  const Converted c = convert_and_read(t.dir / "mlp.json", t.dir / "mlp.jsonl");
  EXPECT_TRUE(c.health.trusted) << error_codes(c.health);
  EXPECT_EQ(c.result.format, "legacy-autograd-profiler");
  EXPECT_EQ(c.result.measured, "ProfilerStep#" + last);
  EXPECT_EQ(c.doc.ops().size(), e["steps"][last].get<std::size_t>());
  EXPECT_EQ(c.result.source_events, e["events"].get<std::uint64_t>());
  // forward / backward / optimizer from the record_function names.
  EXPECT_EQ(c.health.coverage.forward_spans, 1u);
  EXPECT_EQ(c.health.coverage.backward_spans, 1u);
  EXPECT_GE(c.health.coverage.optimizer_spans, 1u);
  EXPECT_EQ(c.doc.run().phase, candle_graph::ExecutionPhase::train);
  // Every step on request (--step N).
  for (const auto& [n, ops] : e["steps"].items()) {
    candle_graph::ImportOptions options;
    options.step = std::stoull(n);
    const Converted s =
        convert_and_read(t.dir / "mlp.json", t.dir / ("mlp-" + n + ".jsonl"), options);
    EXPECT_TRUE(s.health.trusted) << "step " << n << "\n" << error_codes(s.health);
    EXPECT_EQ(s.doc.ops().size(), ops.get<std::size_t>()) << "step " << n;
  }
}

[[maybe_unused]] void check_cnn(const LegacyTraces& t) {
  SCOPED_TRACE("cnn");
  const nlohmann::json& e = t.expected["cnn"];
  const Converted c = convert_and_read(t.dir / "cnn.json", t.dir / "cnn.jsonl");
  EXPECT_TRUE(c.health.trusted) << error_codes(c.health);
  const std::string n = c.result.measured.substr(c.result.measured.find('#') + 1);
  ASSERT_TRUE(e["steps"].contains(n)) << c.result.measured;
  EXPECT_EQ(c.doc.ops().size(), e["steps"][n].get<std::size_t>());
  // No step annotations in this loop: backward is the span of evaluate_function ops, forward the
  // part of the step before it; the module's own ranges are spans too.
  EXPECT_EQ(c.health.coverage.backward_spans, 1u);
  EXPECT_EQ(c.health.coverage.forward_spans, 1u);
  EXPECT_EQ(c.tag("convert.inferred_step_spans"), "2");
  std::size_t conv_blocks = 0;
  for (const auto& s : c.doc.spans()) conv_blocks += s.name == "conv-block" ? 1 : 0;
  EXPECT_EQ(conv_blocks, 1u);
}

// Every span key of a comparison is on both sides with the same count.
[[maybe_unused]] void expect_span_for_span(const candle_graph::Comparison& c) {
  ASSERT_FALSE(c.spans.empty());
  for (const candle_graph::SpanComparison& s : c.spans) {
    EXPECT_GT(s.baseline_count, 0u) << s.name;
    EXPECT_EQ(s.baseline_count, s.candidate_count) << s.name;
    EXPECT_TRUE(s.name.starts_with("ProfilerStep")) << s.name;
  }
}

// Two runs of one workload under two file names, and two steps of one run, meet span by span:
// the converter names the root after the file and the region after its step, and a comparison
// keys such traces from the region (docs/format/pytorch.md). The ranges are the script's own.
[[maybe_unused]] void check_comparisons(const LegacyTraces& t) {
  SCOPED_TRACE("comparisons");
  const std::filesystem::path renamed = t.dir / "host_77.1700000000123.pt.trace.json";
  std::filesystem::copy_file(t.dir / "mlp.json", renamed);
  const Converted a = convert_and_read(t.dir / "mlp.json", t.dir / "a.jsonl");
  const Converted b = convert_and_read(renamed, t.dir / "b.jsonl");
  const candle_graph::Comparison same = candle_graph::compare_documents(a.doc, b.doc);
  EXPECT_TRUE(same.comparable);
  expect_span_for_span(same);
  for (const candle_graph::SpanComparison& s : same.spans) EXPECT_EQ(s.delta_ns, 0) << s.name;
  for (const auto& name : t.expected["mlp"]["annotations"]) {
    const std::string head = "ProfilerStep/" + name.get<std::string>() + " [";
    std::size_t found = 0;
    for (const candle_graph::SpanComparison& s : same.spans) found += s.name.starts_with(head);
    EXPECT_EQ(found, 1u) << head;
  }
  std::vector<std::string> steps;
  for (const auto& [n, ops] : t.expected["mlp"]["steps"].items()) steps.push_back(n);
  ASSERT_GE(steps.size(), 2u);
  auto step = [&](const std::string& n) {
    candle_graph::ImportOptions options;
    options.step = std::stoull(n);
    return convert_and_read(t.dir / "mlp.json", t.dir / ("step-" + n + ".jsonl"), options);
  };
  const Converted first = step(steps.front()), last = step(steps.back());
  expect_span_for_span(candle_graph::compare_documents(first.doc, last.doc));
}

TEST(LegacyTorch, MlpAndCnnTracesConvertWithPyTorchsOwnOpCounts) {
#if CG_TEST_SANITIZED
  GTEST_SKIP() << "torch runs in the Release pass only";
#else
  LegacyTraces t;
  const auto run = candle_graph::testing::run_program(
      {"/usr/bin/python3", CG_FIXTURE_DIR "/pytorch/make_legacy_traces.py", t.dir.path().string()});
  ASSERT_EQ(run.exit_code, 0) << "/usr/bin/python3 with python3-torch failed:\n"
                              << run.out << run.err;
  t.expected = nlohmann::json::parse(slurp(t.dir / "expected.json"));
  check_mlp(t);
  check_cnn(t);
  check_comparisons(t);
#endif
}

}  // namespace
}  // namespace cgimport
