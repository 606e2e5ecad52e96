// The manual_probe example (examples/manual_probe.cpp) writes a trusted trace with every event
// kind. The example binary is built next to the CLI (build-dir/examples/manual_probe).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>

#include "candle_graph/health.hpp"
#include "candle_graph/instrument.hpp"
#include "candle_graph/trace.hpp"
#include "instrument/session_test_support.hpp"
#include "support/run_program.hpp"

namespace candle_graph {
namespace {

TEST(ManualProbe, WritesATrustedTraceWithEveryEventKind) {
  const auto probe = std::filesystem::path(CG_BINARY).parent_path() / "examples" / "manual_probe";
  ASSERT_TRUE(std::filesystem::exists(probe))
      << probe << " is missing: build the manual_probe target (cmake --build <dir>)";
  testing_support::ScratchDir dir;
  const auto trace = dir / "probe.jsonl";
  const auto run = candle_graph::testing::run_program({probe.string(), trace.string()});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;

  const TraceDocument doc = parse_trace(trace);
  EXPECT_EQ(doc.run().capture_step, 3u);  // CaptureSelector::at_step(3) in the example
  EXPECT_EQ(doc.run().warmup_steps, 2u);
  const TraceHealth health = analyze_health(doc);
  EXPECT_TRUE(health.trusted) << health.error_summary();
  // Every kind of evidence is present, so not even a warning (gap) is raised.
  for (const HealthIssue& i : health.issues) ADD_FAILURE() << i.code << ": " << i.message;
  const EvidenceCoverage& c = health.coverage;
  EXPECT_EQ(c.measured_spans, 1u);
  EXPECT_EQ(c.forward_spans, 1u);
  EXPECT_EQ(c.backward_spans, 1u);
  EXPECT_EQ(c.optimizer_spans, 1u);
  EXPECT_GT(c.operations, 0u);
  EXPECT_GT(c.tensors, 0u);
  EXPECT_GT(c.memory_events, 0u);
  EXPECT_EQ(c.device_memory_samples, 1u);
  EXPECT_EQ(c.gradients, 4u);  // w1, b1, w2, b2
  EXPECT_EQ(c.edges, 1u);
  // The only trace is of update 3: exactly one session was opened.
  EXPECT_NE(run.out.find("update 3: loss"), std::string::npos);
}

}  // namespace
}  // namespace candle_graph
