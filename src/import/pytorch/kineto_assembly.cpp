// Kineto and legacy traces -> trace/6 (docs/compatibility.md, "PyTorch convert"):
// - measured region: the chosen ProfilerStep#N (--step N; default the last complete step), or the
//   whole profiled window when the trace has no ProfilerStep;
// - spans: root (the entrypoint) > measured region > user_annotation / record_function ranges,
//   nested by time; ranges crossing their parent's end are clamped into it; ranges outside the
//   region are dropped, ranges enclosing it are dropped, ranges crossing it are clamped;
// - forward/backward/optimizer: annotations named so (last name token), Optimizer.step#...; else
//   a backward span over the autograd engine's evaluate_function ops and a forward span before it;
// - ops: cpu_op events on the host; kernels/memcpy/memset on cuda:N, attached to the span open at
//   their launch (correlation id -> runtime call or ac2g flow start);
// - memory: memory_pairing.cpp. Every drop/repair is counted in the meta tags.
#include <algorithm>
#include <cctype>
#include <ctime>
#include <unordered_map>

#include <simdjson.h>

#include "candle_graph/error.hpp"
#include "candle_graph/trace.hpp"
#include "import/pytorch/assembly.hpp"
#include "import/trace_event/kineto_vocabulary.hpp"
#include "import/pytorch/memory_pairing.hpp"

namespace candle_graph::import::pytorch {
namespace {

struct Step {
  std::uint64_t number = 0;
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::uint32_t name = kNone;
  std::uint64_t ops = 0;
};

struct Draft {
  std::string name;
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::optional<ExecutionStep> step;
  bool measured = false;
  std::uint32_t parent = kNone;
  std::string id;
};

constexpr std::string_view kEvaluateFunction = "autograd::engine::evaluate_function:";

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

// forward/backward/optimizer from an annotation's name: Optimizer.step#..., or the last token of
// the name (split at / | : # [ ] . space) when it is a step alias other than the ambiguous "step".
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

bool crosses(const Draft& a, std::int64_t b0, std::int64_t b1) {
  const bool overlap = a.begin < b1 && b0 < a.end;
  const bool a_in_b = a.begin >= b0 && a.end <= b1;
  const bool b_in_a = b0 >= a.begin && b1 <= a.end;
  return overlap && !a_in_b && !b_in_a;
}

std::string top_level_string(const Model& m, const std::string& key) {
  const auto it = m.top_level.find(key);
  if (it == m.top_level.end()) return {};
  simdjson::dom::parser parser;
  simdjson::dom::element e;
  if (parser.parse(it->second).get(e)) return {};
  std::string_view s;
  if (e.get_string().get(s)) return {};
  return std::string(s);
}

std::optional<std::int64_t> top_level_int(const Model& m, const std::string& key) {
  const auto it = m.top_level.find(key);
  if (it == m.top_level.end()) return std::nullopt;
  simdjson::dom::parser parser;
  simdjson::dom::element e;
  if (parser.parse(it->second).get(e)) return std::nullopt;
  std::int64_t v = 0;
  if (!e.get_int64().get(v)) return v;
  double d = 0;
  if (!e.get_double().get(d)) return static_cast<std::int64_t>(d);
  return std::nullopt;
}

// The innermost span open at time t, for non-decreasing t (a sweep over the pre-order list).
class SpanLocator {
 public:
  SpanLocator(const std::vector<Draft>& drafts, const std::vector<std::uint32_t>& pre)
      : d_(drafts), pre_(pre), stack_{pre.front()} {}
  std::uint32_t at(std::int64_t t) {
    while (next_ < pre_.size() && d_[pre_[next_]].begin <= t) {
      const std::uint32_t s = pre_[next_++];
      while (stack_.size() > 1 && stack_.back() != d_[s].parent) stack_.pop_back();
      stack_.push_back(s);
    }
    while (stack_.size() > 1 && d_[stack_.back()].end < t) stack_.pop_back();
    return stack_.back();
  }

 private:
  const std::vector<Draft>& d_;
  const std::vector<std::uint32_t>& pre_;
  std::vector<std::uint32_t> stack_;
  std::size_t next_ = 1;
};

struct OpOut {
  std::int64_t ts = 0;   // own start (source ns)
  std::int64_t key = 0;  // time used to find the span (launch for device ops)
  std::uint32_t slice = 0;
  std::uint32_t span = 0;
};

}  // namespace

std::string iso_utc(std::int64_t epoch_ns) {
  if (epoch_ns < 0) epoch_ns = 0;
  const std::time_t secs = static_cast<std::time_t>(epoch_ns / 1000000000);
  const int ms = static_cast<int>((epoch_ns / 1000000) % 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
  return buf;
}

void add_ignored(std::map<std::string, std::uint64_t>& rep,
                 const std::map<std::string, std::uint64_t>& ignored) {
  // Categories come from the file: a bounded number of tags, each with a bounded key.
  constexpr std::size_t kMaxCategories = 32, kMaxKey = 64;
  std::size_t listed = 0;
  for (const auto& [cat, n] : ignored) {
    if (listed++ < kMaxCategories) {
      rep["convert.ignored." + cat.substr(0, kMaxKey)] += n;
    } else {
      rep["convert.ignored.other_categories"] += n;
    }
  }
}

void add_counts(ConvertResult& result, const std::map<std::string, std::uint64_t>& counts) {
  for (const auto& [k, v] : counts) {
    if (v > 0) result.repairs.emplace_back(k, v);
  }
}

ConvertResult assemble_pytorch(Model& m, const ConvertOptions& options, const SourceInfo& src,
                               const std::string& path, TraceOutput& out) {
  std::map<std::string, std::uint64_t> rep;
  std::vector<Step> steps;
  std::vector<std::uint32_t> cpu_ops, annotations, device_ops;
  for (std::uint32_t i = 0; i < m.slices.size(); ++i) {
    const Slice& s = m.slices[i];
    switch (s.role) {
      case Role::step_marker: {
        Step st;
        trace_event::parse_profiler_step(m.strings.str(s.name), st.number);
        st.begin = s.ts_ns;
        st.end = s.ts_ns + s.dur_ns;
        st.name = s.name;
        steps.push_back(st);
        break;
      }
      case Role::cpu_op:
        cpu_ops.push_back(i);
        break;
      case Role::annotation:
        annotations.push_back(i);
        break;
      case Role::device_op:
        device_ops.push_back(i);
        break;
      default:
        ++rep["convert.ignored.span_or_op_without_candle_graph_schema"];
        break;
    }
  }
  if (cpu_ops.empty() && annotations.empty() && device_ops.empty() && steps.empty()) {
    throw Error(path, 0,
                "not a PyTorch profiler trace: no operator, annotation, kernel or ProfilerStep "
                "events among its " +
                    std::to_string(m.events) + " events");
  }
  std::sort(steps.begin(), steps.end(),
            [](const Step& a, const Step& b) { return a.begin < b.begin; });
  std::sort(cpu_ops.begin(), cpu_ops.end(), [&](std::uint32_t a, std::uint32_t b) {
    return m.slices[a].ts_ns < m.slices[b].ts_ns;
  });
  auto ops_in = [&](std::int64_t b, std::int64_t e) {
    const auto lo =
        std::lower_bound(cpu_ops.begin(), cpu_ops.end(), b,
                         [&](std::uint32_t i, std::int64_t t) { return m.slices[i].ts_ns < t; });
    const auto hi =
        std::upper_bound(cpu_ops.begin(), cpu_ops.end(), e,
                         [&](std::int64_t t, std::uint32_t i) { return t < m.slices[i].ts_ns; });
    return static_cast<std::uint64_t>(hi - lo);
  };
  for (Step& st : steps) st.ops = ops_in(st.begin, st.end);

  // ---- the measured region ------------------------------------------------------------------
  int sel = -1;
  if (options.step) {
    for (std::size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].number == *options.step) {
        sel = static_cast<int>(i);
        break;
      }
    }
    if (sel < 0) {
      std::string present;
      for (const Step& st : steps)
        present += (present.empty() ? "" : ", ") + std::to_string(st.number);
      throw Error(path, 0,
                  "--step " + std::to_string(*options.step) + ": the trace has no ProfilerStep#" +
                      std::to_string(*options.step) +
                      (steps.empty() ? std::string(" (it has no ProfilerStep at all: omit --step "
                                                   "to measure the whole window)")
                                     : "; steps present: " + present));
    }
  } else if (!steps.empty()) {
    sel = static_cast<int>(steps.size()) - 1;
    // The profiler's stop closes a last step that has barely begun: fewer than half the ops of
    // the step before it means incomplete.
    if (steps.size() >= 2 && steps[sel].ops * 2 < steps[sel - 1].ops) {
      --sel;
      rep["convert.incomplete_last_step_skipped"] = 1;
    }
  }
  if (!steps.empty()) rep["convert.profiler_steps_not_measured"] = steps.size() - 1;
  std::int64_t r0 = 0, r1 = 0;
  if (sel >= 0) {
    r0 = steps[sel].begin;
    r1 = steps[sel].end;
  } else {
    bool any = false;
    auto widen = [&](std::int64_t b, std::int64_t e) {
      if (!any || b < r0) r0 = b;
      if (!any || e > r1) r1 = e;
      any = true;
    };
    for (auto list : {&cpu_ops, &annotations, &device_ops}) {
      for (std::uint32_t i : *list)
        widen(m.slices[i].ts_ns, m.slices[i].ts_ns + m.slices[i].dur_ns);
    }
    for (const MemoryInstant& mi : m.memory) widen(mi.ts_ns, mi.ts_ns);
  }
  const std::string measured_name =
      sel >= 0 ? std::string(m.strings.str(steps[sel].name)) : std::string("profiled window");

  // ---- spans ---------------------------------------------------------------------------------
  // traceName is often a path ("./logs/run.pt.trace.json"): its file name without the
  // extensions PyTorch adds; else the input file's name the same way.
  auto short_name = [](std::string name) {
    const std::size_t slash = name.find_last_of('/');
    if (slash != std::string::npos) name.erase(0, slash + 1);
    for (bool again = true; again;) {
      again = false;
      for (std::string_view ext : {".gz", ".json", ".pt.trace", ".trace"}) {
        if (name.size() > ext.size() && name.ends_with(ext)) {
          name.resize(name.size() - ext.size());
          again = true;
        }
      }
    }
    return name;
  };
  std::string entrypoint = short_name(top_level_string(m, "traceName"));
  if (entrypoint.empty()) entrypoint = short_name(src.file_name);
  if (entrypoint.empty()) entrypoint = "pytorch";
  std::vector<Draft> drafts;
  drafts.push_back({entrypoint, r0, r1, std::nullopt, false, kNone, {}});
  drafts.push_back({measured_name, r0, r1, std::nullopt, true, 0, {}});
  bool has_forward = false, has_backward = false, has_optimizer = false;
  for (std::uint32_t i : annotations) {
    const Slice& s = m.slices[i];
    std::int64_t b = s.ts_ns, e = s.ts_ns + s.dur_ns;
    const std::int64_t overlap = std::min(e, r1) - std::max(b, r0);
    if (overlap < 0 || (overlap == 0 && (b < r0 || e > r1))) {
      ++rep["convert.dropped_spans_outside_window"];
      continue;
    }
    if (sel >= 0 && b <= r0 && e >= r1) {
      ++rep["convert.dropped_spans_enclosing_step"];
      continue;
    }
    if (b < r0 || e > r1) {
      b = std::max(b, r0);
      e = std::min(e, r1);
      ++rep["convert.clamped_spans_to_window"];
    }
    Draft d{std::string(m.strings.str(s.name)),
            b,
            e,
            step_from_name(m.strings.str(s.name)),
            false,
            kNone,
            {}};
    has_forward |= d.step == ExecutionStep::forward;
    has_backward |= d.step == ExecutionStep::backward;
    has_optimizer |= d.step == ExecutionStep::optimizer;
    drafts.push_back(std::move(d));
  }
  auto fits = [&](std::int64_t b, std::int64_t e) {
    for (std::size_t i = 2; i < drafts.size(); ++i) {
      if (crosses(drafts[i], b, e)) return false;
    }
    return true;
  };
  // Backward from the autograd engine, forward before it, when not annotated.
  std::int64_t bb = 0, be = 0;
  bool any_eval = false;
  for (std::uint32_t i : cpu_ops) {
    const Slice& s = m.slices[i];
    if (s.ts_ns < r0 || s.ts_ns > r1 || !starts_with(m.strings.str(s.name), kEvaluateFunction))
      continue;
    if (!any_eval || s.ts_ns < bb) bb = s.ts_ns;
    if (!any_eval || s.ts_ns + s.dur_ns > be) be = s.ts_ns + s.dur_ns;
    any_eval = true;
  }
  be = std::min(be, r1);
  std::int64_t backward_begin = -1;
  if (any_eval && !has_backward) {
    if (fits(bb, be)) {
      drafts.push_back({"backward", bb, be, ExecutionStep::backward, false, kNone, {}});
      ++rep["convert.inferred_step_spans"];
      has_backward = true;
      backward_begin = bb;
    } else {
      ++rep["convert.step_spans_not_inferred_crossing_annotations"];
    }
  } else if (has_backward) {
    for (const Draft& d : drafts) {
      if (d.step == ExecutionStep::backward && (backward_begin < 0 || d.begin < backward_begin))
        backward_begin = d.begin;
    }
  }
  if (!has_forward && backward_begin >= 0) {
    std::int64_t fb = -1;
    for (std::uint32_t i : cpu_ops) {
      const Slice& s = m.slices[i];
      if (s.ts_ns < r0 || s.ts_ns >= backward_begin) continue;
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
    if (fb >= 0 && fb < backward_begin) {
      if (fits(fb, backward_begin)) {
        drafts.push_back({"forward", fb, backward_begin, ExecutionStep::forward, false, kNone, {}});
        ++rep["convert.inferred_step_spans"];
        has_forward = true;
      } else {
        ++rep["convert.step_spans_not_inferred_crossing_annotations"];
      }
    }
  }
  const bool training = has_backward || has_optimizer || any_eval;

  // Nest by time: sorted by (begin, longer first); a span ending after its parent is clamped.
  std::vector<std::uint32_t> order;
  for (std::uint32_t i = 2; i < drafts.size(); ++i) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (drafts[a].begin != drafts[b].begin) return drafts[a].begin < drafts[b].begin;
    return drafts[a].end > drafts[b].end;
  });
  std::vector<std::vector<std::uint32_t>> children(drafts.size());
  children[0].push_back(1);
  {
    std::vector<std::uint32_t> stack{1};
    for (std::uint32_t i : order) {
      while (stack.size() > 1 && drafts[i].begin >= drafts[stack.back()].end &&
             !(drafts[i].begin == drafts[stack.back()].begin)) {
        stack.pop_back();
      }
      const std::uint32_t top = stack.back();
      if (drafts[i].end > drafts[top].end) {
        drafts[i].end = drafts[top].end;
        ++rep["convert.clamped_crossing_spans"];
      }
      drafts[i].parent = top;
      children[top].push_back(i);
      stack.push_back(i);
    }
  }
  std::vector<std::uint32_t> pre;  // pre-order from the measured span (the root is not in it)
  {
    std::vector<std::uint32_t> todo{1};
    while (!todo.empty()) {
      const std::uint32_t s = todo.back();
      todo.pop_back();
      pre.push_back(s);
      for (auto it = children[s].rbegin(); it != children[s].rend(); ++it) todo.push_back(*it);
    }
  }
  drafts[0].id = "s1";
  for (std::size_t i = 0; i < pre.size(); ++i) drafts[pre[i]].id = "s" + std::to_string(i + 2);

  // ---- ops -----------------------------------------------------------------------------------
  std::vector<OpOut> ops;
  ops.reserve(cpu_ops.size() + device_ops.size());
  for (std::uint32_t i : cpu_ops) {
    const Slice& s = m.slices[i];
    if (s.ts_ns < r0 || s.ts_ns > r1) {
      ++rep["convert.dropped_ops_outside_window"];
      continue;
    }
    ops.push_back({s.ts_ns, s.ts_ns, i, 0});
  }
  std::int32_t first_device = -1;
  for (std::uint32_t i : device_ops) {
    const Slice& s = m.slices[i];
    std::int64_t launch = s.ts_ns;
    const auto it = s.correlation >= 0 ? m.launch_ns.find(s.correlation) : m.launch_ns.end();
    if (it != m.launch_ns.end()) {
      launch = it->second;
    } else {
      ++rep["convert.device_ops_without_launch_record"];
    }
    if (launch < r0 || launch > r1) {
      ++rep["convert.dropped_device_ops_outside_window"];
      continue;
    }
    if (s.device >= 0 && (first_device < 0 || s.device < first_device)) first_device = s.device;
    ops.push_back({s.ts_ns, launch, i, 0});
  }
  std::sort(ops.begin(), ops.end(), [](const OpOut& a, const OpOut& b) { return a.key < b.key; });
  {
    SpanLocator locate(drafts, pre);
    for (OpOut& o : ops) o.span = locate.at(o.key);
  }
  std::stable_sort(ops.begin(), ops.end(),
                   [](const OpOut& a, const OpOut& b) { return a.ts < b.ts; });

  // ---- memory --------------------------------------------------------------------------------
  std::vector<PairedMemory> memory = pair_memory(m.memory, r0, r1, rep);
  std::vector<std::uint32_t> memory_span(memory.size());
  {
    SpanLocator locate(drafts, pre);
    for (std::size_t i = 0; i < memory.size(); ++i) memory_span[i] = locate.at(memory[i].ts_ns);
  }
  // A span's step, inherited from its ancestors, for memory categories.
  std::vector<std::optional<ExecutionStep>> inherited(drafts.size());
  for (std::uint32_t s : pre) {
    inherited[s] = drafts[s].step              ? drafts[s].step
                   : drafts[s].parent != kNone ? inherited[drafts[s].parent]
                                               : std::nullopt;
  }

  // ---- flows and what was not mapped -----------------------------------------------------------
  if (!m.flows.empty()) {
    std::unordered_map<std::int64_t, std::pair<std::uint64_t, std::uint64_t>> by_id;
    for (const Flow& f : m.flows) {
      auto& c = by_id[f.id ^ (static_cast<std::int64_t>(f.cat) << 40)];
      (f.ph == 's' ? c.first : c.second) += 1;
    }
    std::uint64_t lone_starts = 0, lone_ends = 0;
    for (const auto& [id, c] : by_id) {
      if (c.first > c.second) lone_starts += c.first - c.second;
      if (c.second > c.first) lone_ends += c.second - c.first;
    }
    rep["convert.flows_not_mapped"] = m.flows.size();
    rep["convert.unmatched_flow_starts"] = lone_starts;
    rep["convert.unmatched_flow_ends"] = lone_ends;
  }
  add_ignored(rep, m.ignored);
  rep["convert.ignored.metadata"] = m.metadata_events;
  rep["convert.skipped_malformed_events"] = m.malformed_events;
  if (src.missing_array_end) rep["convert.repaired_missing_array_end"] = 1;
  std::int64_t clamped_ts = 0;
  for (const OpOut& o : ops) clamped_ts += o.ts < r0 ? 1 : 0;
  rep["convert.clamped_timestamps_before_window"] = static_cast<std::uint64_t>(clamped_ts);

  // ---- meta and output -----------------------------------------------------------------------
  ConvertResult result;
  result.format = src.format;
  result.measured = measured_name;
  result.source_events = m.events;
  add_counts(result, rep);
  const std::uint64_t capture_step = sel >= 0 ? std::max<std::uint64_t>(steps[sel].number, 1) : 1;
  std::vector<std::string> owned;  // tag strings (the events view them)
  owned.reserve(16 + 2 * result.repairs.size());
  std::vector<Tag> tags;
  auto tag = [&](std::string k, std::string v) {
    owned.push_back(std::move(k));
    const std::string_view key = owned.back();
    owned.push_back(std::move(v));
    tags.push_back({key, owned.back()});
  };
  tag("source.format", src.format);
  tag("source.file", src.file_name);
  tag("source.events", std::to_string(m.events));
  tag("source.measured", measured_name);
  if (src.gzip) tag("source.gzip", "true");
  for (const auto& [k, v] : result.repairs) tag(k, std::to_string(v));
  std::sort(tags.begin(), tags.end(), [](const Tag& a, const Tag& b) { return a.key < b.key; });

  std::int64_t epoch = r0;
  if (epoch < 1000000000000000000LL) {
    const auto base = top_level_int(m, "baseTimeNanoseconds");
    epoch = base ? *base + r0 : 0;
  }
  const std::string device = first_device >= 0 ? "cuda:" + std::to_string(first_device) : "cpu";
  const std::string run_id = "pytorch-" + entrypoint + "-" + std::to_string(r0);
  const std::string correlation =
      entrypoint + (training ? "/update-" : "/inference-") + std::to_string(capture_step);
  const std::string timestamp = iso_utc(epoch);
  MetaEvent meta;
  meta.schema = kTraceSchema;
  meta.run.run_id = run_id;
  meta.run.correlation_id = correlation;
  meta.run.entrypoint = entrypoint;
  meta.run.phase = training ? ExecutionPhase::train : ExecutionPhase::infer;
  meta.run.timestamp = timestamp;
  meta.run.capture_step = capture_step;
  meta.run.warmup_steps = capture_step - 1;
  meta.run.device = device;
  meta.run.timing_mode = TimingMode::host;
  meta.run.tags = tags;
  out.emit(meta);

  auto emit_span = [&](std::uint32_t i) {
    const Draft& d = drafts[i];
    SpanStartEvent s;
    s.id = d.id;
    if (d.parent != kNone) s.parent_id = std::string_view(drafts[d.parent].id);
    s.name = d.name;
    s.start_ns = static_cast<std::uint64_t>(d.begin - r0);
    s.span_kind = SpanKind::function;
    s.measured = d.measured;
    s.step = d.step;
    out.emit(s);
    out.emit(SpanEndEvent{d.id, static_cast<std::uint64_t>(d.end - d.begin)});
  };
  emit_span(0);
  for (std::uint32_t s : pre) emit_span(s);
  result.spans = pre.size() + 1;

  std::vector<std::uint64_t> shape;
  for (const OpOut& o : ops) {
    const Slice& s = m.slices[o.slice];
    OpEvent e;
    e.span_id = drafts[o.span].id;
    e.op_name = m.strings.str(s.name);
    e.duration_ns = static_cast<std::uint64_t>(s.dur_ns);
    e.timestamp_ns = static_cast<std::uint64_t>(std::max<std::int64_t>(s.ts_ns - r0, 0));
    std::string device_label;
    if (s.role == Role::device_op) {
      device_label = "cuda:" + std::to_string(std::max(s.device, 0));
      e.device = device_label;
      e.dtype = "unknown";
      e.storage_bytes = s.bytes;
      ++result.device_ops;
    } else {
      shape = m.dims_at(s.dims);
      e.shape = shape;
      e.dtype = s.dtype != kNone ? m.strings.str(s.dtype) : std::string_view("unknown");
      e.device = "cpu";
      e.storage_bytes = 0;  // PyTorch records inputs only; the output's size is unknown
      if (s.input_bytes > 0) e.input_storage_bytes = s.input_bytes;
    }
    out.emit(e);
  }
  result.ops = ops.size();

  std::string tensor_id;
  for (std::size_t i = 0; i < memory.size(); ++i) {
    const PairedMemory& p = memory[i];
    tensor_id = "mem-" + std::to_string(p.tensor);
    MemoryEvent e;
    e.timestamp_ns = static_cast<std::uint64_t>(p.ts_ns - r0);
    e.tensor_id = tensor_id;
    e.span_id = drafts[memory_span[i]].id;
    e.device = m.strings.str(p.device);
    e.bytes = p.bytes;
    e.action = p.alloc ? MemoryAction::alloc : MemoryAction::free;
    e.dtype = "unknown";
    const auto step = inherited[memory_span[i]];
    e.category = step ? category_for_step(step, false) : MemoryCategory::other;
    out.emit(e);
  }
  result.memory_events = memory.size();
  return result;
}

}  // namespace candle_graph::import::pytorch
