#include "import/pytorch/span_plan.hpp"

#include <algorithm>
#include <cctype>

namespace candle_graph::import::pytorch {
namespace {

using trace_event::Slice;

constexpr std::string_view kEvaluateFunction = "autograd::engine::evaluate_function:";

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

bool crosses(const Draft& a, std::int64_t b0, std::int64_t b1) {
  const bool overlap = a.begin < b1 && b0 < a.end;
  const bool a_in_b = a.begin >= b0 && a.end <= b1;
  const bool b_in_a = b0 >= a.begin && b1 <= a.end;
  return overlap && !a_in_b && !b_in_a;
}

// A candidate span fits when it crosses no annotation already drafted.
bool fits(const std::vector<Draft>& drafts, std::int64_t b, std::int64_t e) {
  for (std::size_t i = 2; i < drafts.size(); ++i) {
    if (crosses(drafts[i], b, e)) return false;
  }
  return true;
}

struct StepTags {
  bool forward = false, backward = false, optimizer = false;
};

// Annotations inside the region become drafts: outside it dropped, enclosing the measured step
// dropped, crossing its edge clamped.
StepTags draft_annotations(const Model& m, const EventLists& lists, const Region& region,
                           std::vector<Draft>& drafts, RepairCounts& repairs) {
  const std::int64_t r0 = region.begin, r1 = region.end;
  StepTags tags;
  for (std::uint32_t i : lists.annotations) {
    const Slice& s = m.slices[i];
    std::int64_t b = s.ts_ns, e = s.ts_ns + s.dur_ns;
    const std::int64_t overlap = std::min(e, r1) - std::max(b, r0);
    if (overlap < 0 || (overlap == 0 && (b < r0 || e > r1))) {
      ++repairs["convert.dropped_spans_outside_window"];
      continue;
    }
    if (region.step && b <= r0 && e >= r1) {
      ++repairs["convert.dropped_spans_enclosing_step"];
      continue;
    }
    if (b < r0 || e > r1) {
      b = std::max(b, r0);
      e = std::min(e, r1);
      ++repairs["convert.clamped_spans_to_window"];
    }
    Draft d{std::string(m.strings.str(s.name)),
            b,
            e,
            step_from_name(m.strings.str(s.name)),
            false,
            kNone,
            {}};
    tags.forward |= d.step == ExecutionStep::forward;
    tags.backward |= d.step == ExecutionStep::backward;
    tags.optimizer |= d.step == ExecutionStep::optimizer;
    drafts.push_back(std::move(d));
  }
  return tags;
}

// The extent of the autograd engine's evaluate_function ops inside the region.
struct EngineExtent {
  bool any = false;
  std::int64_t begin = 0, end = 0;
};

EngineExtent autograd_engine_extent(const Model& m, const EventLists& lists, const Region& region) {
  EngineExtent x;
  for (std::uint32_t i : lists.cpu_ops) {
    const Slice& s = m.slices[i];
    if (s.ts_ns < region.begin || s.ts_ns > region.end ||
        !starts_with(m.strings.str(s.name), kEvaluateFunction))
      continue;
    if (!x.any || s.ts_ns < x.begin) x.begin = s.ts_ns;
    if (!x.any || s.ts_ns + s.dur_ns > x.end) x.end = s.ts_ns + s.dur_ns;
    x.any = true;
  }
  x.end = std::min(x.end, region.end);
  return x;
}

// Without a backward annotation: a `backward` span over the autograd engine's ops. Returns where
// the backward pass begins (annotated or inferred), or -1.
std::int64_t infer_backward(const EngineExtent& engine, StepTags& tags, std::vector<Draft>& drafts,
                            RepairCounts& repairs) {
  std::int64_t backward_begin = -1;
  if (engine.any && !tags.backward) {
    if (fits(drafts, engine.begin, engine.end)) {
      drafts.push_back(
          {"backward", engine.begin, engine.end, ExecutionStep::backward, false, kNone, {}});
      ++repairs["convert.inferred_step_spans"];
      tags.backward = true;
      backward_begin = engine.begin;
    } else {
      ++repairs["convert.step_spans_not_inferred_crossing_annotations"];
    }
  } else if (tags.backward) {
    for (const Draft& d : drafts) {
      if (d.step == ExecutionStep::backward && (backward_begin < 0 || d.begin < backward_begin))
        backward_begin = d.begin;
    }
  }
  return backward_begin;
}

// Without a forward annotation: a `forward` span from the first op outside Optimizer.* ranges to
// the start of the backward pass.
void infer_forward(const Model& m, const EventLists& lists, const Region& region,
                   std::int64_t backward_begin, StepTags& tags, std::vector<Draft>& drafts,
                   RepairCounts& repairs) {
  if (tags.forward || backward_begin < 0) return;
  std::int64_t fb = -1;
  for (std::uint32_t i : lists.cpu_ops) {
    const Slice& s = m.slices[i];
    if (s.ts_ns < region.begin || s.ts_ns >= backward_begin) continue;
    bool in_optimizer = false;
    for (std::size_t k = 2; k < drafts.size() && !in_optimizer; ++k) {
      in_optimizer = starts_with(drafts[k].name, "Optimizer.") && s.ts_ns >= drafts[k].begin &&
                     s.ts_ns <= drafts[k].end;
    }
    if (!in_optimizer) {
      fb = s.ts_ns;
      break;  // cpu_ops is sorted by start
    }
  }
  if (fb < 0 || fb >= backward_begin) return;
  if (fits(drafts, fb, backward_begin)) {
    drafts.push_back({"forward", fb, backward_begin, ExecutionStep::forward, false, kNone, {}});
    ++repairs["convert.inferred_step_spans"];
    tags.forward = true;
  } else {
    ++repairs["convert.step_spans_not_inferred_crossing_annotations"];
  }
}

// Nest by time: sorted by (begin, longer first); a span ending after its parent is clamped. Ids
// s2, s3, ... follow the pre-order from the measured span.
void nest_drafts(SpanPlan& plan, RepairCounts& repairs) {
  std::vector<Draft>& drafts = plan.drafts;
  std::vector<std::uint32_t> order;
  for (std::uint32_t i = 2; i < drafts.size(); ++i) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (drafts[a].begin != drafts[b].begin) return drafts[a].begin < drafts[b].begin;
    return drafts[a].end > drafts[b].end;
  });
  std::vector<std::vector<std::uint32_t>> children(drafts.size());
  children[0].push_back(1);
  std::vector<std::uint32_t> stack{1};
  for (std::uint32_t i : order) {
    while (stack.size() > 1 && drafts[i].begin >= drafts[stack.back()].end &&
           !(drafts[i].begin == drafts[stack.back()].begin)) {
      stack.pop_back();
    }
    const std::uint32_t top = stack.back();
    if (drafts[i].end > drafts[top].end) {
      drafts[i].end = drafts[top].end;
      ++repairs["convert.clamped_crossing_spans"];
    }
    drafts[i].parent = top;
    children[top].push_back(i);
    stack.push_back(i);
  }
  std::vector<std::uint32_t> todo{1};
  while (!todo.empty()) {
    const std::uint32_t s = todo.back();
    todo.pop_back();
    plan.pre.push_back(s);
    for (auto it = children[s].rbegin(); it != children[s].rend(); ++it) todo.push_back(*it);
  }
  drafts[0].id = "s1";
  for (std::size_t i = 0; i < plan.pre.size(); ++i)
    drafts[plan.pre[i]].id = "s" + std::to_string(i + 2);
}

}  // namespace

std::optional<ExecutionStep> step_from_name(std::string_view name) {
  if (starts_with(name, "Optimizer.step#")) return ExecutionStep::optimizer;
  std::size_t end = name.size();
  auto is_sep = [](char c) {
    return std::string_view("/|:#[]. ").find(c) != std::string_view::npos;
  };
  while (end > 0 && is_sep(name[end - 1])) --end;
  std::size_t begin = end;
  while (begin > 0 && !is_sep(name[begin - 1])) --begin;
  const std::string_view token = name.substr(begin, end - begin);
  std::string lower(token);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "step") return std::nullopt;
  return parse_execution_step_alias(lower);
}

SpanPlan plan_spans(const Model& m, const EventLists& lists, const Region& region,
                    const std::string& entrypoint, RepairCounts& repairs) {
  SpanPlan plan;
  plan.drafts.push_back({entrypoint, region.begin, region.end, std::nullopt, false, kNone, {}});
  plan.drafts.push_back(
      {region.measured_name, region.begin, region.end, std::nullopt, true, 0, {}});
  StepTags tags = draft_annotations(m, lists, region, plan.drafts, repairs);
  const EngineExtent engine = autograd_engine_extent(m, lists, region);
  const std::int64_t backward_begin = infer_backward(engine, tags, plan.drafts, repairs);
  infer_forward(m, lists, region, backward_begin, tags, plan.drafts, repairs);
  plan.training = tags.backward || tags.optimizer || engine.any;
  nest_drafts(plan, repairs);
  return plan;
}

std::uint32_t SpanLocator::at(std::int64_t t) {
  while (next_ < pre_.size() && d_[pre_[next_]].begin <= t) {
    const std::uint32_t s = pre_[next_++];
    while (stack_.size() > 1 && stack_.back() != d_[s].parent) stack_.pop_back();
    stack_.push_back(s);
  }
  while (stack_.size() > 1 && d_[stack_.back()].end < t) stack_.pop_back();
  return stack_.back();
}

}  // namespace candle_graph::import::pytorch
