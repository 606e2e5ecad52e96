#include "import/pytorch/step_region.hpp"

#include <algorithm>

#include "candle_graph/error.hpp"
#include "import/trace_event/kineto_vocabulary.hpp"
#include "trace/profiler_steps.hpp"
#include "trace/time_intervals.hpp"

namespace candle_graph::import::pytorch {

using trace_event::MemoryInstant;
using trace_event::Role;
using trace_event::Slice;

EventLists classify_events(const Model& m, const std::string& path, RepairCounts& repairs) {
  EventLists lists;
  for (std::uint32_t i = 0; i < m.slices.size(); ++i) {
    const Slice& s = m.slices[i];
    switch (s.role) {
      case Role::step_marker: {
        Step st;
        parse_profiler_step(m.strings.str(s.name), st.number);
        st.begin = s.ts_ns;
        st.end = s.ts_ns + s.dur_ns;
        st.name = s.name;
        lists.steps.push_back(st);
        break;
      }
      case Role::cpu_op:
        lists.cpu_ops.push_back(i);
        break;
      case Role::annotation:
        lists.annotations.push_back(i);
        break;
      case Role::device_op:
        lists.device_ops.push_back(i);
        break;
      case Role::runtime:
        lists.runtime_calls.push_back(i);
        break;
      default:
        ++repairs["convert.ignored.span_or_op_without_candle_graph_schema"];
        break;
    }
  }
  if (lists.cpu_ops.empty() && lists.annotations.empty() && lists.device_ops.empty() &&
      lists.steps.empty()) {
    // Events dropped for bad values are the likelier cause than a file of another kind.
    const std::string rejected = m.bad_values.describe_rejections(m.events);
    if (!rejected.empty())
      throw Error(path, 0,
                  "no usable events: " + rejected +
                      "; no operator, annotation, kernel or ProfilerStep event is left");
    throw Error(path, 0,
                "not a PyTorch profiler trace: no operator, annotation, kernel or ProfilerStep "
                "events among its " +
                    std::to_string(m.events) + " events");
  }
  std::sort(lists.steps.begin(), lists.steps.end(),
            [](const Step& a, const Step& b) { return a.begin < b.begin; });
  std::sort(lists.cpu_ops.begin(), lists.cpu_ops.end(), [&](std::uint32_t a, std::uint32_t b) {
    return m.slices[a].ts_ns < m.slices[b].ts_ns;
  });
  for (Step& st : lists.steps) st.ops = ops_starting_in(m, lists.cpu_ops, st.begin, st.end);
  return lists;
}

std::uint64_t ops_starting_in(const Model& m, const std::vector<std::uint32_t>& cpu_ops,
                              std::int64_t begin, std::int64_t end) {
  const auto lo =
      std::lower_bound(cpu_ops.begin(), cpu_ops.end(), begin,
                       [&](std::uint32_t i, std::int64_t t) { return m.slices[i].ts_ns < t; });
  const auto hi =
      std::upper_bound(cpu_ops.begin(), cpu_ops.end(), end,
                       [&](std::int64_t t, std::uint32_t i) { return t < m.slices[i].ts_ns; });
  return static_cast<std::uint64_t>(hi - lo);
}

std::vector<ProfilerStepRecord> step_records(const Model& m, const EventLists& lists) {
  const std::vector<Step>& steps = lists.steps;
  // Per step, its work's intervals measured from the step's begin (a kernel starts after its
  // launch, inside the step), so they fit the unsigned intervals of the union.
  std::vector<std::vector<TimeInterval>> busy(steps.size());
  for (std::uint32_t i : lists.device_ops) {
    const Slice& s = m.slices[i];
    if (s.kind == OpKind::sync) continue;  // a wait keeps no device busy
    const auto launch = s.correlation >= 0 ? m.launch_ns.find(s.correlation) : m.launch_ns.end();
    const std::int64_t t = launch != m.launch_ns.end() ? launch->second : s.ts_ns;
    // The last step that begins at or before t, if t is inside it.
    auto it = std::upper_bound(steps.begin(), steps.end(), t,
                               [](std::int64_t v, const Step& st) { return v < st.begin; });
    if (it == steps.begin()) continue;
    --it;
    if (t > it->end) continue;
    const auto from_begin =
        static_cast<std::uint64_t>(std::max<std::int64_t>(s.ts_ns - it->begin, 0));
    busy[static_cast<std::size_t>(it - steps.begin())].emplace_back(
        from_begin, from_begin + static_cast<std::uint64_t>(s.dur_ns));
  }
  std::vector<ProfilerStepRecord> out;
  out.reserve(steps.size());
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const std::uint64_t union_ns = covered_length(merge_intervals(std::move(busy[k])));
    out.push_back(
        {steps[k].number, static_cast<std::uint64_t>(steps[k].end - steps[k].begin), union_ns});
  }
  return out;
}

namespace {

int requested_step(const std::vector<Step>& steps, std::uint64_t step, const std::string& path) {
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].number == step) return static_cast<int>(i);
  }
  std::string present;
  for (const Step& st : steps) present += (present.empty() ? "" : ", ") + std::to_string(st.number);
  throw Error(path, 0,
              "--step " + std::to_string(step) + ": the trace has no ProfilerStep#" +
                  std::to_string(step) +
                  (steps.empty() ? std::string(" (it has no ProfilerStep at all: omit --step "
                                               "to measure the whole window)")
                                 : "; steps present: " + present));
}

// Whether the profiler's stop closed the last step when it had barely begun: fewer than half the
// ops of the step before it.
bool last_step_cut_short(const std::vector<Step>& steps) {
  return steps.size() >= 2 && steps.back().ops * 2 < steps[steps.size() - 2].ops;
}

}  // namespace

Region choose_region(const Model& m, const EventLists& lists, std::optional<std::uint64_t> step,
                     bool all_steps, const std::string& path, RepairCounts& repairs) {
  const std::vector<Step>& steps = lists.steps;
  const bool cut_short = last_step_cut_short(steps);
  int sel = -1;
  if (all_steps) {
    // every event: the window below
  } else if (step) {
    sel = requested_step(steps, *step, path);
  } else if (!steps.empty()) {
    // The last step, or the one before it when the last was cut short.
    sel = static_cast<int>(steps.size()) - (cut_short ? 2 : 1);
  }
  if (!steps.empty() && !all_steps)
    repairs["convert.profiler_steps_not_measured"] = steps.size() - 1;
  // Named whichever step is measured, so that the steps' statistics can leave the cut step out.
  if (cut_short && sel >= 0 && sel + 1 < static_cast<int>(steps.size()))
    repairs["convert.incomplete_last_step_skipped"] = 1;
  Region r;
  if (sel >= 0) {
    r.step = &steps[sel];
    r.begin = r.step->begin;
    r.end = r.step->end;
    r.measured_name = std::string(m.strings.str(r.step->name));
    r.capture_step = std::max<std::uint64_t>(r.step->number, 1);
    return r;
  }
  bool any = false;
  auto widen = [&](std::int64_t b, std::int64_t e) {
    if (!any || b < r.begin) r.begin = b;
    if (!any || e > r.end) r.end = e;
    any = true;
  };
  for (auto list : {&lists.cpu_ops, &lists.annotations, &lists.device_ops, &lists.runtime_calls}) {
    for (std::uint32_t i : *list) widen(m.slices[i].ts_ns, m.slices[i].ts_ns + m.slices[i].dur_ns);
  }
  for (const MemoryInstant& mi : m.memory) widen(mi.ts_ns, mi.ts_ns);
  r.measured_name = all_steps && !steps.empty() ? "all profiler steps" : "profiled window";
  if (all_steps && !steps.empty())
    r.capture_step = std::max<std::uint64_t>(steps.front().number, 1);
  return r;
}

}  // namespace candle_graph::import::pytorch
