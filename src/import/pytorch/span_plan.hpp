// The span tree of a converted PyTorch trace: root (the entrypoint) > the measured region >
// user_annotation / record_function ranges nested by time, with forward/backward/optimizer step
// tags, and the spans inferred from the autograd engine when none are annotated. What breaks a
// trace/6 rule (children inside parents) is clamped or dropped and counted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "candle_graph/trace_format.hpp"
#include "import/pytorch/step_region.hpp"

namespace candle_graph::import::pytorch {

struct Draft {
  std::string name;
  std::int64_t begin = 0;  // source ns
  std::int64_t end = 0;
  std::optional<ExecutionStep> step;
  bool measured = false;
  std::uint32_t parent = kNone;
  std::string id;  // s1, s2, ... in pre-order
};

struct SpanPlan {
  std::vector<Draft> drafts;       // [0] the root, [1] the measured span
  std::vector<std::uint32_t> pre;  // pre-order from the measured span (the root not in it)
  bool training = false;           // backward or optimizer evidence
};

SpanPlan plan_spans(const Model& m, const EventLists& lists, const Region& region,
                    const std::string& entrypoint, RepairCounts& repairs);

// The innermost span open at time t, for non-decreasing t (a sweep over the pre-order list).
class SpanLocator {
 public:
  explicit SpanLocator(const SpanPlan& plan)
      : d_(plan.drafts), pre_(plan.pre), stack_{plan.pre.front()} {}
  std::uint32_t at(std::int64_t t);

 private:
  const std::vector<Draft>& d_;
  const std::vector<std::uint32_t>& pre_;
  std::vector<std::uint32_t> stack_;
  std::size_t next_ = 1;
};

// forward/backward/optimizer from an annotation's name: Optimizer.step#..., or the last token of
// the name (split at / | : # [ ] . space) when it is a step alias other than the ambiguous "step".
std::optional<ExecutionStep> step_from_name(std::string_view name);

}  // namespace candle_graph::import::pytorch
