// A process killed (SIGKILL) while a LibTorch capture records leaves a trace that parses and
// says the capture was cut short. The capture buffers its op and memory events until finish(),
// so what survives is what the session wrote on the way in: the meta, the spans begun, the
// parameter checkpoints. Expected health from trace6.md §6 (open_span, capture_cut_short).
#include <gtest/gtest.h>
#include <unistd.h>

#include <ATen/ATen.h>
#include <torch/nn/modules/linear.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "candle_graph/health.hpp"
#include "candle_graph/torch/capture.hpp"
#include "candle_graph/trace.hpp"
#include "support/forked_child.hpp"
#include "support/run_program.hpp"
#include "support/temp_dir.hpp"

namespace {

namespace cg = candle_graph;
namespace cgt = candle_graph::libtorch;

// Runs in the forked child: a capture with a forward span open, recording until killed.
[[noreturn]] void capture_until_killed(const std::filesystem::path& path, int ready_fd) {
  at::set_num_threads(1);
  torch::nn::Linear model(16, 16);
  cgt::TorchCapture capture(path, cg::ProfileRun::training("killed::update", 4, "cpu"), *model);
  cgt::CaptureSpan forward = capture.begin_step_span("forward", cg::ExecutionStep::forward);
  for (int i = 0; i < 50; ++i) model->forward(at::randn({8, 16})).sum();
  const char byte = 'r';
  if (::write(ready_fd, &byte, 1) != 1) ::_exit(3);
  for (;;) ::pause();
}

TEST(TorchCaptureKill, KilledMidCaptureLeavesATraceThatSaysItWasCutShort) {
  const cg::testing::TempDir dir("cg_torch_kill_tests");
  const auto path = dir / "killed.jsonl";
  ASSERT_TRUE(cg::testing::kill_child_when_ready([&](int ready_fd) {
    capture_until_killed(path, ready_fd);
  })) << "the child failed before recording, or was not killed";

  std::ifstream in(path, std::ios::binary);
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');  // whole lines only
  const cg::TraceDocument doc = cg::parse_trace(path);
  EXPECT_EQ(doc.run().entrypoint, "killed::update");
  const auto measured = std::find_if(doc.spans().begin(), doc.spans().end(),
                                     [](const cg::SpanRecord& s) { return s.measured; });
  ASSERT_NE(measured, doc.spans().end());
  EXPECT_FALSE(measured->closed);

  const cg::TraceHealth health = cg::analyze_health(doc);
  EXPECT_FALSE(health.trusted);
  std::size_t cut_short = 0;
  for (const cg::HealthIssue& i : health.issues)
    if (i.code == "capture_cut_short") {
      ++cut_short;
      EXPECT_NE(i.message.find("`" + std::string(measured->id) + "` never ended"),
                std::string::npos)
          << i.message;
    }
  EXPECT_EQ(cut_short, 1u);

  // `validate --require-trusted` parses it and refuses it: exit 3, the code in its JSON.
  const auto run = cg::testing::run_cli({"validate", path.string(), "--require-trusted"});
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
  EXPECT_NE(run.out.find("\"capture_cut_short\""), std::string::npos) << run.out;
}

}  // namespace
