// LibTorch auto-capture: real captures of the example CNN, read back with the
// project's own trace reader and health analysis. Expected values are derived from the trace
// file itself (independent recounts) or from the model definition (parameter names), never
// from the capture's own summary alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "candle_graph/health.hpp"
#include "candle_graph/trace.hpp"
#include "temp_trace.hpp"
#include "torch_example_model.hpp"

namespace {

using candle_graph::torch_tests::temp_trace;
namespace cg = candle_graph;
using torch_example::CaptureRequest;
using torch_example::ModelOptions;
using torch_example::Trainer;

bool has_step(const cg::TraceDocument& doc, cg::ExecutionStep step) {
  return std::any_of(doc.spans().begin(), doc.spans().end(),
                     [&](const cg::SpanRecord& s) { return s.step == step; });
}

std::map<std::string, cg::GradientState> gradient_states(const cg::TraceDocument& doc) {
  std::map<std::string, cg::GradientState> out;
  for (const auto& g : doc.gradients()) out[std::string(g.key)] = g.state;
  return out;
}

std::string tag(const cg::TraceDocument& doc, std::string_view key) {
  for (const cg::Tag& t : doc.run().tags)
    if (t.key == key) return std::string(t.value);
  return {};
}

// Captures update 3 of a fresh model (two uncaptured updates first, like the example).
cg::TraceDocument capture_update(const ModelOptions& model, CaptureRequest request,
                                 torch_example::Trainer** keep = nullptr,
                                 candle_graph::libtorch::CaptureSummary* summary = nullptr) {
  static std::vector<std::unique_ptr<Trainer>> trainers;  // parameter names outlive the call
  trainers.push_back(std::make_unique<Trainer>(model));
  Trainer& t = *trainers.back();
  t.train_step();
  t.train_step();
  request.step = 3;
  const auto s = t.captured_train_step(request);
  if (keep != nullptr) *keep = &t;
  if (summary != nullptr) *summary = s;
  return cg::parse_trace(request.trace);
}

TEST(TorchCapture, TrainingUpdateIsTrustedWithStepSpansOpsEdgesMemoryAndGradients) {
  Trainer* trainer = nullptr;
  candle_graph::libtorch::CaptureSummary summary;
  const cg::TraceDocument doc =
      capture_update({}, {.trace = temp_trace("train")}, &trainer, &summary);
  const cg::TraceHealth health = cg::analyze_health(doc);
  EXPECT_TRUE(health.trusted) << health.error_summary();
  EXPECT_EQ(doc.run().capture_step, 3u);
  EXPECT_EQ(tag(doc, "torch.memory_capture"), "on");

  // forward and optimizer are opened by the example; backward() ran without a span of its own.
  EXPECT_TRUE(has_step(doc, cg::ExecutionStep::forward));
  EXPECT_TRUE(has_step(doc, cg::ExecutionStep::backward));
  EXPECT_TRUE(has_step(doc, cg::ExecutionStep::optimizer));

  // Ops with real ATen names, and backward work attributed to the backward span.
  std::size_t aten = 0;
  std::set<std::string_view> names;
  std::string_view backward_span;
  for (const auto& s : doc.spans())
    if (s.step == cg::ExecutionStep::backward) backward_span = s.id;
  std::size_t in_backward = 0;
  for (const auto& op : doc.ops()) {
    if (op.op_name.starts_with("aten::")) ++aten;
    names.insert(op.op_name);
    if (op.span_id == backward_span && op.op_name.find("Backward") != std::string_view::npos)
      ++in_backward;
  }
  EXPECT_GE(doc.ops().size(), 100u);
  EXPECT_GE(aten, 100u);
  for (const char* expected : {"aten::conv2d", "aten::addmm", "aten::relu", "aten::max_pool2d"})
    EXPECT_TRUE(names.contains(expected)) << expected;
  EXPECT_GT(in_backward, 0u) << "autograd nodes must land in the backward span";
  EXPECT_EQ(summary.ops, doc.ops().size());
  // The capture's warm-up (zeros + add, run before the region begins) is not the user's work:
  // the example update itself never calls aten::zeros.
  EXPECT_FALSE(names.contains("aten::zeros"));

  // Data edges: an op consumes a tensor id another op produced (recounted from the file).
  std::set<std::string_view> outputs;
  for (const auto& op : doc.ops())
    if (op.output) outputs.insert(*op.output);
  std::size_t edges = 0;
  for (const auto& op : doc.ops())
    for (std::string_view in : op.inputs)
      if (outputs.contains(in)) ++edges;
  EXPECT_GE(edges, 50u);
  // Parameters are consumed under their names, so the graph connects them to their ops.
  const std::set<std::string_view> consumed = [&] {
    std::set<std::string_view> s;
    for (const auto& op : doc.ops()) s.insert(op.inputs.begin(), op.inputs.end());
    return s;
  }();
  EXPECT_TRUE(consumed.contains("fc1.weight"));
  EXPECT_TRUE(consumed.contains("input"));

  // Memory: replay the events: positive peak, every free matches a live alloc of the same id.
  std::map<std::string_view, std::uint64_t> live;
  std::uint64_t live_bytes = 0, peak = 0, frees = 0;
  std::vector<const cg::MemoryEvent*> events;
  for (const auto& m : doc.memory()) events.push_back(&m);
  std::stable_sort(events.begin(), events.end(),
                   [](auto* a, auto* b) { return a->timestamp_ns < b->timestamp_ns; });
  for (const cg::MemoryEvent* m : events) {
    if (m->action == cg::MemoryAction::alloc) {
      EXPECT_FALSE(live.contains(m->tensor_id)) << m->tensor_id;
      live[m->tensor_id] = m->bytes;
      live_bytes += m->bytes;
      peak = std::max(peak, live_bytes);
    } else {
      ++frees;
      ASSERT_TRUE(live.contains(m->tensor_id)) << "unmatched free of " << m->tensor_id;
      EXPECT_EQ(live[m->tensor_id], m->bytes);
      live_bytes -= m->bytes;
      live.erase(m->tensor_id);
    }
  }
  EXPECT_GT(peak, 0u);
  EXPECT_GT(frees, 0u);
  EXPECT_EQ(summary.peak_bytes, peak);
  EXPECT_EQ(summary.live_at_end, live.size());
  // The running-loss tensor of update 2 is replaced during update 3: its block was allocated
  // before the capture, so its free is counted, not written.
  EXPECT_GE(summary.pre_capture_frees, 1u);
  EXPECT_GE(summary.pre_capture_free_bytes, 4u);
  // Ops that allocate their output share the id with the memory event of the block.
  std::set<std::string_view> allocated;
  for (const auto& m : doc.memory())
    if (m.action == cg::MemoryAction::alloc) allocated.insert(m.tensor_id);
  std::size_t backed = 0;
  for (const auto& op : doc.ops())
    if (op.output && allocated.contains(*op.output)) ++backed;
  EXPECT_GE(backed, 20u);
  std::set<cg::MemoryCategory> categories;
  for (const auto& m : doc.memory()) categories.insert(m.category);
  EXPECT_TRUE(categories.contains(cg::MemoryCategory::activation));
  EXPECT_TRUE(categories.contains(cg::MemoryCategory::gradient));

  // A gradient fact for every parameter (names from the model), all present after backward.
  const auto states = gradient_states(doc);
  const std::vector<std::string> params = trainer->parameter_names();
  ASSERT_EQ(params.size(), 6u);  // conv, fc1, fc2: weight + bias
  for (const std::string& p : params) {
    ASSERT_TRUE(states.contains(p)) << p;
    EXPECT_EQ(states.at(p), cg::GradientState::present) << p;
  }
  for (const auto& g : doc.gradients()) EXPECT_TRUE(g.norm.has_value() && *g.norm > 0) << g.key;

  // Checkpoints: parameters and inputs; device memory at the start and end of the region.
  std::set<std::string_view> tensors;
  for (const auto& t : doc.tensors()) tensors.insert(t.tensor_id);
  for (const std::string& p : params) EXPECT_TRUE(tensors.contains(p)) << p;
  EXPECT_TRUE(tensors.contains("input"));
  EXPECT_TRUE(tensors.contains("target"));
  ASSERT_EQ(doc.device_memory().size(), 2u);
  EXPECT_GT(doc.device_memory()[0].used_bytes, 0u);
  EXPECT_GT(doc.device_memory()[0].free_bytes, 0u);
  EXPECT_EQ(health.coverage.measured_spans, 1u);
}

TEST(TorchCapture, PoisonedGradientIsNonFinite) {
  candle_graph::libtorch::CaptureSummary summary;
  const cg::TraceDocument doc = capture_update(
      {}, {.trace = temp_trace("poison"), .poison_gradient = "fc2.bias"}, nullptr, &summary);
  const auto states = gradient_states(doc);
  ASSERT_TRUE(states.contains("fc2.bias"));
  EXPECT_EQ(states.at("fc2.bias"), cg::GradientState::non_finite);
  EXPECT_EQ(states.at("fc2.weight"), cg::GradientState::present);
  for (const auto& g : doc.gradients())
    if (g.key == "fc2.bias") {
      EXPECT_FALSE(g.norm.has_value());
    }
  EXPECT_EQ(summary.non_finite_gradients, 1u);
  EXPECT_TRUE(cg::analyze_health(doc).trusted);
}

TEST(TorchCapture, ParameterWithoutGradientIsMissing) {
  const cg::TraceDocument doc =
      capture_update({.unused_parameter = true}, {.trace = temp_trace("unused")});
  const auto states = gradient_states(doc);
  ASSERT_TRUE(states.contains("unused.weight"));
  EXPECT_EQ(states.at("unused.weight"), cg::GradientState::missing);
  EXPECT_EQ(states.at("unused.bias"), cg::GradientState::missing);
  EXPECT_EQ(states.at("conv.weight"), cg::GradientState::present);
  EXPECT_EQ(doc.gradients().size(), 8u);
}

TEST(TorchCapture, InferenceCallHasNoBackwardAndNoGradients) {
  Trainer model({});
  model.infer();
  const auto path = temp_trace("infer");
  model.captured_inference({.trace = path, .step = 2});
  const cg::TraceDocument doc = cg::parse_trace(path);
  const cg::TraceHealth health = cg::analyze_health(doc);
  EXPECT_TRUE(health.trusted) << health.error_summary();
  EXPECT_EQ(doc.run().phase, cg::ExecutionPhase::infer);
  EXPECT_FALSE(has_step(doc, cg::ExecutionStep::backward));
  EXPECT_TRUE(doc.gradients().empty());
  EXPECT_GE(doc.ops().size(), 10u);
  EXPECT_FALSE(doc.memory().empty());
}

TEST(TorchCapture, TorchProfilerHoldingTheSlotSkipsMemoryAndSaysSo) {
  candle_graph::libtorch::CaptureSummary summary;
  const cg::TraceDocument doc = capture_update(
      {}, {.trace = temp_trace("profiler"), .under_torch_profiler = true}, nullptr, &summary);
  EXPECT_TRUE(tag(doc, "torch.memory_capture").starts_with("skipped"))
      << tag(doc, "torch.memory_capture");
  EXPECT_TRUE(doc.memory().empty());
  EXPECT_FALSE(summary.memory_captured);
  EXPECT_GE(doc.ops().size(), 100u);  // op capture does not depend on the slot
  EXPECT_TRUE(cg::analyze_health(doc).trusted);
}

}  // namespace
