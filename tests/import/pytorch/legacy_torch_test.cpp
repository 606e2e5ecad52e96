// Legacy autograd-profiler traces written in the test by Debian's /usr/bin/python3 with
// python3-torch 1.13 (a small MLP with forward/backward/optimizer record_function ranges and a
// small CNN with module-level ranges, both under torch.profiler.schedule + prof.step()). One
// python process writes both traces and, from the JSON PyTorch wrote, the number of events of
// each step (tests/fixtures/pytorch/make_legacy_traces.py). Release pass only: skipped under the
// sanitizers (torch's start costs seconds and its libraries are not instrumented).
#include <cstdlib>
#include <nlohmann/json.hpp>

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
#endif
}

}  // namespace
}  // namespace cgimport
