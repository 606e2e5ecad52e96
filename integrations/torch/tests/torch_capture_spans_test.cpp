// LibTorch auto-capture, span attribution: ops land in the innermost span
// open on the training thread however it was opened (capture functions or the session's own
// begin_span / begin_step_span), and the automatic backward span ends when backward() does.
// Expected spans come from the model code (which spans it opens around which calls); every
// check reads the trace file back with the project's reader.
#include <gtest/gtest.h>

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
using torch_example::Trainer;

cg::TraceDocument capture(CaptureRequest request) {
  Trainer trainer({});
  trainer.train_step();
  request.step = 2;
  (void)trainer.captured_train_step(request);
  return cg::parse_trace(request.trace);
}

const cg::SpanRecord* span_named(const cg::TraceDocument& doc, std::string_view name) {
  for (const auto& s : doc.spans())
    if (s.name == name) return &s;
  return nullptr;
}

std::string_view measured_id(const cg::TraceDocument& doc) {
  for (const auto& s : doc.spans())
    if (s.measured) return s.id;
  return {};
}

TEST(TorchCaptureSpans, OpsLandInStepSpansOpenedThroughTheSessionApi) {
  const cg::TraceDocument doc =
      capture({.trace = temp_trace("session_spans"), .session_spans = true});
  const cg::TraceHealth health = cg::analyze_health(doc);
  EXPECT_TRUE(health.trusted) << health.error_summary();

  // The model opens exactly these three step spans through session().begin_step_span; the
  // capture must not add an automatic backward span next to the user's.
  const cg::SpanRecord* forward = span_named(doc, "forward");
  const cg::SpanRecord* backward = span_named(doc, "backward");
  const cg::SpanRecord* optimizer = span_named(doc, "optimizer");
  ASSERT_TRUE(forward && backward && optimizer);
  EXPECT_EQ(forward->step, cg::ExecutionStep::forward);
  EXPECT_EQ(backward->step, cg::ExecutionStep::backward);
  EXPECT_EQ(optimizer->step, cg::ExecutionStep::optimizer);
  std::size_t backward_spans = 0;
  for (const auto& s : doc.spans())
    if (s.step == cg::ExecutionStep::backward) ++backward_spans;
  EXPECT_EQ(backward_spans, 1u);

  std::map<std::string_view, std::set<std::string_view>> names_by_span;
  std::map<std::string_view, std::size_t> count_by_span;
  for (const auto& op : doc.ops()) {
    names_by_span[op.span_id].insert(op.op_name);
    ++count_by_span[op.span_id];
    // Autograd nodes run only inside loss.backward(), which the backward span wraps.
    if (op.op_name.find("Backward0") != std::string_view::npos) {
      EXPECT_EQ(op.span_id, backward->id) << op.op_name;
    }
  }
  // The forward pass (conv → relu → pool → linear) runs inside `forward`, Adam's update inside
  // `optimizer` (torch::optim::Adam::step uses addcdiv_ and sqrt).
  for (const char* name : {"aten::conv2d", "aten::relu", "aten::max_pool2d", "aten::addmm"})
    EXPECT_TRUE(names_by_span[forward->id].contains(name)) << name;
  EXPECT_TRUE(names_by_span[backward->id].contains("AddmmBackward0"));
  EXPECT_TRUE(names_by_span[optimizer->id].contains("aten::addcdiv_"));
  EXPECT_GE(count_by_span[forward->id], 10u);
  EXPECT_GE(count_by_span[backward->id], 20u);
  EXPECT_GE(count_by_span[optimizer->id], 20u);

  // Memory categories follow the step of the session spans.
  std::set<cg::MemoryCategory> categories;
  for (const auto& m : doc.memory()) categories.insert(m.category);
  EXPECT_TRUE(categories.contains(cg::MemoryCategory::activation));
  EXPECT_TRUE(categories.contains(cg::MemoryCategory::gradient));
  EXPECT_TRUE(categories.contains(cg::MemoryCategory::optimizer));
}

TEST(TorchCaptureSpans, AutomaticBackwardSpanEndsWhenBackwardReturns) {
  // No backward span is opened by the model; right after backward() it opens a plain span
  // through the session. That span must be a sibling of the automatic backward span (child of
  // the measured region), not nested in it, and begin after the backward span ended.
  const cg::TraceDocument doc =
      capture({.trace = temp_trace("after_backward"), .span_after_backward = "after_backward"});
  const cg::TraceHealth health = cg::analyze_health(doc);
  EXPECT_TRUE(health.trusted) << health.error_summary();
  const cg::SpanRecord* after = span_named(doc, "after_backward");
  ASSERT_NE(after, nullptr);
  const cg::SpanRecord* backward = nullptr;
  for (const auto& s : doc.spans())
    if (s.step == cg::ExecutionStep::backward) backward = &s;
  ASSERT_NE(backward, nullptr);
  EXPECT_TRUE(backward->name.ends_with("/backward")) << backward->name;
  std::size_t named_backward = 0;  // the automatic span is the only one: no user span around it
  for (const auto& s : doc.spans())
    if (s.name.ends_with("/backward")) ++named_backward;
  EXPECT_EQ(named_backward, 1u);
  ASSERT_TRUE(backward->parent_id.has_value());
  EXPECT_EQ(*backward->parent_id, measured_id(doc));
  ASSERT_TRUE(after->parent_id.has_value());
  EXPECT_EQ(*after->parent_id, measured_id(doc));
  ASSERT_TRUE(backward->closed);
  EXPECT_LE(backward->start_ns + backward->duration_ns, after->start_ns);
  // The last op of the backward span ends inside it: the span holds the whole pass.
  std::uint64_t last_op_end = 0;
  for (const auto& op : doc.ops())
    if (op.span_id == backward->id) last_op_end = std::max(last_op_end, op.timestamp_ns);
  EXPECT_GT(last_op_end, backward->start_ns);
}

// loss.backward() makes the implicit gradient (aten::ones_like, with its nested ops and its
// allocation) before the autograd engine runs its first record: it is part of backward() and
// lands in the automatic backward span, which starts when the ones_like started.
TEST(TorchCaptureSpans, ImplicitGradientOfBackwardIsInTheBackwardSpan) {
  const cg::TraceDocument doc = capture({.trace = temp_trace("implicit_gradient")});
  const cg::TraceHealth health = cg::analyze_health(doc);
  EXPECT_TRUE(health.trusted) << health.error_summary();
  const cg::SpanRecord* backward = nullptr;
  for (const auto& s : doc.spans())
    if (s.step == cg::ExecutionStep::backward) backward = &s;
  ASSERT_NE(backward, nullptr);
  std::size_t ones_like = 0;
  std::string seed_output;
  for (const auto& op : doc.ops()) {
    if (op.op_name == "aten::ones_like") {
      ++ones_like;
      EXPECT_EQ(op.span_id, backward->id);
      EXPECT_EQ(op.timestamp_ns, backward->start_ns) << "the span starts with the ones_like";
      if (op.output) seed_output = *op.output;
    }
    if (op.span_id == backward->id) {
      EXPECT_GE(op.timestamp_ns, backward->start_ns) << op.op_name;
    }
  }
  EXPECT_EQ(ones_like, 1u);  // Adam's state exists at update 2: nothing else calls ones_like
  ASSERT_FALSE(seed_output.empty());
  std::size_t seed_allocs = 0;
  for (const auto& m : doc.memory())
    if (m.tensor_id == seed_output && m.action == cg::MemoryAction::alloc) {
      ++seed_allocs;
      EXPECT_EQ(m.span_id, backward->id);
    }
  EXPECT_EQ(seed_allocs, 1u);
}

}  // namespace
