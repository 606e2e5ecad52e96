// A CaptureSpan that outlives its TorchCapture: ending it later must not
// touch the capture's recycled state, which the next capture on the same thread reuses. The
// only tensor code here is a tiny autograd graph (hence the ATen include in this unit alone).
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <filesystem>
#include <optional>
#include <string>

#include "candle_graph/health.hpp"
#include "candle_graph/torch/capture.hpp"
#include "candle_graph/trace.hpp"
#include "temp_trace.hpp"

namespace {

using candle_graph::torch_tests::temp_trace;
namespace cg = candle_graph;
namespace cgt = candle_graph::libtorch;

TEST(TorchCaptureSpans, SpanOutlivingItsCaptureLeavesTheNextCaptureAlone) {
  const torch::nn::Module model;  // no parameters: the graph below is the whole update
  std::optional<cgt::CaptureSpan> stale;
  {
    cgt::TorchCapture first(temp_trace("first"), cg::ProfileRun::training("lifetime", 1, "cpu"),
                            model);
    stale.emplace(first.begin_span("outer"));
  }  // finished with `outer` still open: its state goes back to the thread's pool

  const std::filesystem::path second_trace = temp_trace("second");
  {
    cgt::TorchCapture second(second_trace, cg::ProfileRun::training("lifetime", 2, "cpu"), model);
    const at::Tensor x = at::ones({4}).requires_grad_(true);
    const at::Tensor y = x * 3;
    // Ends the stale span in the middle of backward(), while the second capture's automatic
    // backward span is open: the hook runs inside the engine when y's gradient is ready, and
    // x's AccumulateGrad node runs after it.
    y.register_hook([&](const at::Tensor& grad) {
      stale.reset();
      return grad;
    });
    y.mul(2).sum().backward();
  }

  const cg::TraceDocument doc = cg::parse_trace(second_trace);
  const cg::TraceHealth health = cg::analyze_health(doc);
  EXPECT_TRUE(health.trusted) << health.error_summary();
  // One backward pass, one automatic backward span holding every autograd node. Had the stale
  // span ended the second capture's backward span, the nodes after the hook would have opened
  // a second one.
  std::size_t backward_spans = 0;
  std::string_view backward_id;
  for (const auto& s : doc.spans())
    if (s.step == cg::ExecutionStep::backward) {
      ++backward_spans;
      backward_id = s.id;
    }
  EXPECT_EQ(backward_spans, 1u);
  std::size_t nodes = 0;
  for (const auto& op : doc.ops())
    if (op.op_name.find("Backward0") != std::string_view::npos ||
        op.op_name.find("AccumulateGrad") != std::string_view::npos) {
      ++nodes;
      EXPECT_EQ(op.span_id, backward_id) << op.op_name;
    }
  EXPECT_GE(nodes, 3u);  // SumBackward0, MulBackward0 ×2, AccumulateGrad
}

}  // namespace
