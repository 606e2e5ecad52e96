#include "compare/cohort_json.hpp"

namespace candle_graph::compare {
namespace {

using output::JsonStream;

void opt_f64(JsonStream& w, const std::optional<double>& v) {
  v ? w.f64(*v) : w.null();
}

void interval(JsonStream& w, const std::optional<Interval>& i) {
  if (!i) {
    w.null();
    return;
  }
  w.begin_object();
  w.schema_key("low").f64(i->low);
  w.schema_key("high").f64(i->high);
  w.end_object();
}

// `unit` names the means and the delta: measured totals and span totals in ns, peaks in bytes.
void estimate(JsonStream& w, const DeltaEstimate& e, std::string_view unit,
              std::string_view verdict) {
  const std::string u(unit);
  w.begin_object();
  w.schema_key("baseline_mean_" + u).f64(e.baseline_mean);
  w.schema_key("candidate_mean_" + u).f64(e.candidate_mean);
  w.schema_key("delta_" + u).f64(e.delta);
  w.schema_key("delta_percent");
  opt_f64(w, e.delta_percent);
  w.schema_key("interval_percent");
  interval(w, e.percent_interval);
  w.schema_key("interval_" + u);
  interval(w, e.delta_interval);
  w.schema_key("verdict").string(verdict);
  w.end_object();
}

std::string_view timing_word(Direction d) {
  switch (d) {
    case Direction::increase:
      return "slower";
    case Direction::decrease:
      return "faster";
    case Direction::unchanged:
      return "unchanged";
    case Direction::inconclusive:
      break;
  }
  return "inconclusive";
}

std::string_view memory_word(Direction d) {
  switch (d) {
    case Direction::increase:
      return "higher";
    case Direction::decrease:
      return "lower";
    case Direction::unchanged:
      return "unchanged";
    case Direction::inconclusive:
      break;
  }
  return "inconclusive";
}

void runs(JsonStream& w, const std::vector<CohortRun>& list) {
  w.begin_array();
  for (const CohortRun& r : list) {
    w.begin_object();
    w.schema_key("source").string(r.source);
    w.schema_key("run_id").string(r.run_id);
    w.schema_key("trusted").boolean(r.trusted);
    w.schema_key("pair_id");
    r.pair_id ? w.string(*r.pair_id) : w.null();
    w.schema_key("measured_total_ns").u64(r.measured_total_ns);
    w.schema_key("peak_bytes").u64(r.peak_bytes);
    w.end_object();
  }
  w.end_array();
}

void states(JsonStream& w, const StateCounts& counts) {
  // Keys in alphabetical order, only the states that occur.
  static constexpr std::pair<std::string_view, std::size_t> kOrder[] = {
      {"absent", kAbsentState},
      {"missing", static_cast<std::size_t>(GradientState::missing)},
      {"non_finite", static_cast<std::size_t>(GradientState::non_finite)},
      {"present", static_cast<std::size_t>(GradientState::present)},
      {"zero", static_cast<std::size_t>(GradientState::zero)}};
  w.begin_object();
  for (const auto& [name, index] : kOrder)
    if (counts[index]) w.schema_key(name).u64(counts[index]);
  w.end_object();
}

}  // namespace

void write_cohort_comparison(JsonStream& w, const CohortComparison& c) {
  const bool estimated = !c.baseline.empty() && !c.candidate.empty();
  w.begin_object();
  w.schema_key("schema").string(kCohortComparisonSchema);
  w.schema_key("statistic").string(kCohortStatistic);
  w.schema_key("verdict").string(timing_word(c.verdict));
  w.schema_key("eligibility").begin_object();
  w.schema_key("eligible").boolean(c.eligible);
  w.schema_key("reasons").begin_array();
  for (const EligibilityReason& r : c.reasons) {
    w.begin_object();
    w.schema_key("code").string(to_string(r.code));
    w.schema_key("message").string(r.message);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  w.schema_key("warnings").begin_array();
  for (const std::string& s : c.warnings) w.string(s);
  w.end_array();
  w.schema_key("threshold_percent").f64(c.threshold_percent);
  w.schema_key("bootstrap").begin_object();
  w.schema_key("method").string(kIntervalMethod);
  w.schema_key("confidence").f64(c.bootstrap.confidence);
  w.schema_key("resamples").u64(c.bootstrap.resamples);
  w.schema_key("seed").u64(c.bootstrap.seed);
  w.schema_key("pairing").string(c.pairing == Pairing::paired ? "paired" : "independent");
  w.schema_key("percentile_levels");
  if (c.levels) {
    w.begin_array();
    w.f64(c.levels->low);
    w.f64(c.levels->high);
    w.end_array();
  } else {
    w.null();
  }
  w.end_object();
  w.schema_key("measured_total");
  estimated ? estimate(w, c.measured_total, "ns", timing_word(c.verdict)) : void(w.null());
  w.schema_key("peak_memory");
  estimated ? estimate(w, c.peak_bytes, "bytes", memory_word(c.peak_direction)) : void(w.null());
  w.schema_key("baseline_runs");
  runs(w, c.baseline);
  w.schema_key("candidate_runs");
  runs(w, c.candidate);
  w.schema_key("span_keys").u64(c.span_keys);
  w.schema_key("spans").begin_array();
  for (const SpanDelta& s : c.spans) {
    w.begin_object();
    w.schema_key("name").string(s.name);
    w.schema_key("baseline_runs_with").u64(s.baseline_runs_with);
    w.schema_key("candidate_runs_with").u64(s.candidate_runs_with);
    w.schema_key("baseline_mean_ns").f64(s.estimate.baseline_mean);
    w.schema_key("candidate_mean_ns").f64(s.estimate.candidate_mean);
    w.schema_key("delta_ns").f64(s.estimate.delta);
    w.schema_key("delta_percent");
    opt_f64(w, s.estimate.delta_percent);
    w.schema_key("interval_percent");
    interval(w, s.estimate.percent_interval);
    w.schema_key("interval_ns");
    interval(w, s.estimate.delta_interval);
    w.schema_key("verdict").string(timing_word(s.direction));
    w.end_object();
  }
  w.end_array();
  w.schema_key("gradient_changes").u64(c.gradient_changes);
  w.schema_key("gradients").begin_array();
  for (const GradientStateChange& g : c.gradients) {
    w.begin_object();
    w.schema_key("parameter").string(g.parameter);
    w.schema_key("baseline_states");
    states(w, g.baseline);
    w.schema_key("candidate_states");
    states(w, g.candidate);
    w.schema_key("baseline_mean_norm");
    opt_f64(w, g.baseline_mean_norm);
    w.schema_key("candidate_mean_norm");
    opt_f64(w, g.candidate_mean_norm);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

}  // namespace candle_graph::compare
