#include "compare/cohort_comparison.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "candle_graph/analysis.hpp"
#include "candle_graph/health.hpp"
#include "compare/comparison_parts.hpp"
#include "output/markdown_text.hpp"

namespace candle_graph::compare {
namespace {

// At most this many reasons per code are listed; one more line counts the rest, so a cohort of
// a thousand untrusted runs still gives a bounded document.
constexpr std::size_t kReasonsPerCode = 10;

class Reasons {
 public:
  void add(EligibilityCode code, std::string message) {
    std::size_t& n = count_[static_cast<std::size_t>(code)];
    if (++n <= kReasonsPerCode) list_.push_back({code, std::move(message)});
  }
  std::vector<EligibilityReason> take() {
    for (std::size_t c = 0; c < count_.size(); ++c)
      if (count_[c] > kReasonsPerCode)
        list_.push_back(
            {static_cast<EligibilityCode>(c),
             "and " + std::to_string(count_[c] - kReasonsPerCode) + " more of this kind"});
    return std::move(list_);
  }

 private:
  std::vector<EligibilityReason> list_;
  std::array<std::size_t, 5> count_{};
};

// Cuts `s` to about `max` bytes without splitting a UTF-8 sequence.
std::string bounded(std::string s, std::size_t max = 200) {
  if (s.size() <= max) return s;
  std::size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  s.resize(cut);
  return s + "…";
}

std::string show_tags(const std::vector<std::pair<std::string, std::string>>& tags) {
  std::string s = "{";
  for (const auto& [k, v] : tags) {
    if (s.size() > 1) s += ", ";
    s += k + "=" + v;
  }
  return bounded(s + "}");
}

std::string label(const CohortRun& r) {
  return r.source + " (run " + output::quoted_code(bounded(r.run_id)) + ")";
}

// One reason per condition that is not the same on every run, naming the first run (the
// reference) and the first run that differs from it.
// Which identity conditions a set of runs must share. The steps of one profiler trace (compare
// --steps-as-runs) differ in warmup by construction, and two traces of one job on two ranks
// differ in file name and device index: their steps share those within each side only. Across
// the sides, the GPU models must agree where both traces name one.
enum class Conditions { all, run_identity, workload };

// Equal unless both name a model and the models differ.
struct NamedModel {
  const std::optional<std::string>* model;
  bool operator==(const NamedModel& o) const {
    return !*model || !*o.model || **model == **o.model;
  }
};

void check_conditions(const std::vector<const CohortRun*>& runs, Reasons& out,
                      Conditions which = Conditions::all) {
  if (runs.empty()) return;
  const bool identity = which != Conditions::workload, workload = which != Conditions::run_identity;
  const CohortRun& ref = *runs.front();
  auto field = [&](std::string_view name, auto get, auto show) {
    std::size_t differing = 0;
    const CohortRun* first = nullptr;
    for (const CohortRun* r : runs)
      if (!(get(r->conditions) == get(ref.conditions))) {
        ++differing;
        if (!first) first = r;
      }
    if (!differing) return;
    out.add(EligibilityCode::identity_conditions_differ,
            std::string(name) + " differs: " + output::quoted_code(show(ref.conditions)) + " in " +
                label(ref) + " vs " + output::quoted_code(show(first->conditions)) + " in " +
                label(*first) + " (" + std::to_string(differing) + " of " +
                std::to_string(runs.size()) + " runs differ from the first)");
  };
  using C = RunConditions;
  auto str = [](const std::string& s) { return bounded(s); };
  if (identity) {
    field(
        "entrypoint", [](const C& c) { return c.entrypoint; },
        [&](const C& c) {
          return c.entrypoint ? str(*c.entrypoint) : std::string("a profiler trace's file name");
        });
    field(
        "device", [](const C& c) { return c.device; },
        [&](const C& c) { return str(c.device.shown()); });
  }
  if (!workload) return;
  field(
      "phase", [](const C& c) { return c.phase; },
      [](const C& c) { return std::string(to_string(c.phase)); });
  field(
      "measured region", [](const C& c) { return c.region; },
      [](const C& c) { return c.region.value_or("none"); });
  field(
      "timing mode", [](const C& c) { return c.timing_mode; },
      [](const C& c) { return std::string(to_string(c.timing_mode)); });
  field(
      "measured-region device synchronization",
      [](const C& c) { return c.measured_region_device_synchronized; },
      [](const C& c) {
        return std::string(c.measured_region_device_synchronized ? "true" : "false");
      });
  if (which == Conditions::workload)
    field(
        "device model", [](const C& c) { return NamedModel{&c.device.model}; },
        [&](const C& c) { return str(c.device.model.value_or("none")); });
  if (which == Conditions::all)
    field(
        "warmup", [](const C& c) { return c.warmup_steps; },
        [](const C& c) { return std::to_string(c.warmup_steps); });
  field(
      "workload tags", [](const C& c) { return c.workload_tags; },
      [](const C& c) { return show_tags(c.workload_tags); });
}

// Warnings only, as in comparison/1: descriptive tags are expected to differ between the
// cohorts; several values inside one cohort are worth a note.
void descriptive_warnings(const std::vector<CohortRun>& b, const std::vector<CohortRun>& c,
                          std::vector<std::string>& out) {
  std::set<std::string> keys;
  for (const auto* side : {&b, &c})
    for (const CohortRun& r : *side)
      for (const auto& t : r.descriptive_tags) keys.insert(t.first);
  for (const std::string& key : keys) {
    auto values = [&](const std::vector<CohortRun>& runs) {
      std::set<std::optional<std::string>> v;
      for (const CohortRun& r : runs) {
        std::optional<std::string> value;
        for (const auto& t : r.descriptive_tags)
          if (t.first == key) value = t.second;
        v.insert(value);
      }
      return v;
    };
    const auto vb = values(b), vc = values(c);
    if (vb != vc)
      out.push_back("descriptive `" + key + "` differs, as expected for a code-change comparison");
    if (vb.size() > 1)
      out.push_back("the baseline runs carry " + std::to_string(vb.size()) + " different `" + key +
                    "` values");
    if (vc.size() > 1)
      out.push_back("the candidate runs carry " + std::to_string(vc.size()) + " different `" + key +
                    "` values");
  }
}

// Paired when every run carries a pair_id and the ids match one to one across the cohorts; then
// the candidate runs are put in the order of their baseline partners.
Pairing pair_runs(std::vector<CohortRun>& b, std::vector<CohortRun>& c,
                  std::vector<std::string>& warnings) {
  std::size_t tagged = 0;
  for (const auto* side : {&b, &c})
    for (const CohortRun& r : *side) tagged += r.pair_id ? 1 : 0;
  const std::size_t total = b.size() + c.size();
  if (tagged == 0 || b.empty() || c.empty()) return Pairing::independent;
  if (tagged < total) {
    warnings.push_back(std::to_string(tagged) + " of " + std::to_string(total) +
                       " runs carry a `pair_id` tag; the cohorts were resampled independently");
    return Pairing::independent;
  }
  std::map<std::string, std::size_t> candidate_at;
  bool one_to_one = b.size() == c.size();
  for (std::size_t i = 0; i < c.size() && one_to_one; ++i)
    one_to_one = candidate_at.emplace(*c[i].pair_id, i).second;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < b.size() && one_to_one; ++i)
    one_to_one = seen.insert(*b[i].pair_id).second && candidate_at.count(*b[i].pair_id);
  if (!one_to_one) {
    warnings.push_back(
        "the `pair_id` tags do not pair the runs one to one (each id once in each cohort); the "
        "cohorts were resampled independently");
    return Pairing::independent;
  }
  std::vector<CohortRun> ordered;
  ordered.reserve(c.size());
  for (const CohortRun& r : b) ordered.push_back(std::move(c[candidate_at[*r.pair_id]]));
  c = std::move(ordered);
  return Pairing::paired;
}

std::uint64_t span_total(const CohortRun& r, std::uint32_t key) {
  auto it = std::lower_bound(r.span_totals.begin(), r.span_totals.end(),
                             std::pair<std::uint32_t, std::uint64_t>{key, 0});
  return it != r.span_totals.end() && it->first == key ? it->second : 0;
}

}  // namespace

std::string_view to_string(Side s) noexcept {
  return s == Side::baseline ? "baseline" : "candidate";
}

std::string_view to_string(EligibilityCode c) noexcept {
  switch (c) {
    case EligibilityCode::insufficient_runs:
      return "insufficient_runs";
    case EligibilityCode::duplicate_run_id:
      return "duplicate_run_id";
    case EligibilityCode::identity_conditions_differ:
      return "identity_conditions_differ";
    case EligibilityCode::untrusted_input:
      return "untrusted_input";
    case EligibilityCode::unverified_inputs:
      return "unverified_inputs";
  }
  return "";
}

std::uint32_t CohortBuilder::intern(std::unordered_map<std::string, std::uint32_t>& index,
                                    std::vector<std::string>& names, std::string name) {
  auto [it, fresh] = index.try_emplace(std::move(name), static_cast<std::uint32_t>(names.size()));
  if (fresh) names.push_back(it->first);
  return it->second;
}

// Runs of one workload have the same span keys in the same order (their spans' document order):
// a key is first compared with the previous run's key in step with it, instead of being hashed
// and compared in the index (a tenth of a 2 x 10 comparison's work). A key out of step is looked
// up as before, and the walk resumes after its place in the previous run.
std::uint32_t CohortBuilder::span_key(std::string key, std::size_t& next) {
  if (next < last_span_keys_.size() && span_names_[last_span_keys_[next]] == key)
    return last_span_keys_[next++];
  const std::uint32_t k = intern(span_index_, span_names_, std::move(key));
  if (k < last_span_place_.size() && last_span_place_[k] != kNoIndex)
    next = last_span_place_[k] + 1;
  return k;
}

ReducedRun reduce_run(const TraceDocument& doc, std::string source) {
  ReducedRun reduced;
  CohortRun& r = reduced.run;
  r.source = std::move(source);
  r.run_id = std::string(doc.run().run_id);
  const TraceHealth health = analyze_health(doc);
  r.trusted = health.trusted;
  if (!r.trusted) r.untrusted_because = bounded(health.error_summary(), 400);
  RunConditions& c = r.conditions;
  if (!evidence::entrypoint_names_a_file(doc.run())) c.entrypoint = doc.run().entrypoint;
  c.region = evidence::measured_region_label(doc);
  c.phase = doc.run().phase;
  c.device = evidence::device_identity(doc.run());
  c.timing_mode = doc.run().timing_mode;
  c.measured_region_device_synchronized = doc.run().measured_region_device_synchronized;
  c.warmup_steps = doc.run().warmup_steps;
  for (const Tag& t : doc.run().tags) {  // sorted by key in the document
    if (t.key == kPairIdTag)
      r.pair_id = std::string(t.value);
    else if (evidence::is_descriptive_tag(t.key))
      r.descriptive_tags.emplace_back(t.key, t.value);
    else if (!evidence::is_provenance_tag(t.key))
      c.workload_tags.emplace_back(t.key, t.value);
  }
  r.measured_total_ns = evidence::measured_total(doc);
  r.peak_bytes = memory_summary(doc).peak_bytes;
  for (auto& [key, cost] : evidence::span_cost_list(doc, r.source))
    reduced.span_totals.emplace_back(std::move(key), cost.total_ns);
  for (auto& [parameter, fact] : evidence::gradient_facts(doc))
    reduced.gradients.emplace_back(parameter, RunGradient{0, fact.state, fact.norm});
  return reduced;
}

void CohortBuilder::add_run(Side side, const TraceDocument& doc, std::string source) {
  add_reduced(side, reduce_run(doc, std::move(source)));
}

void CohortBuilder::add_reduced(Side side, ReducedRun reduced) {
  CohortRun& r = reduced.run;
  std::size_t next = 0;
  for (auto& [key, total_ns] : reduced.span_totals)
    r.span_totals.emplace_back(span_key(std::move(key), next), total_ns);
  // This run's keys, in its order (before the sort below), for the next run to walk.
  last_span_keys_.resize(r.span_totals.size());
  last_span_place_.assign(span_names_.size(), kNoIndex);
  for (std::uint32_t i = 0; i < r.span_totals.size(); ++i) {
    last_span_keys_[i] = r.span_totals[i].first;
    last_span_place_[last_span_keys_[i]] = i;
  }
  std::sort(r.span_totals.begin(), r.span_totals.end());
  for (auto& [parameter, gradient] : reduced.gradients) {
    gradient.parameter = intern(parameter_index_, parameter_names_, std::move(parameter));
    r.gradients.push_back(gradient);
  }
  std::sort(r.gradients.begin(), r.gradients.end(),
            [](const RunGradient& a, const RunGradient& b) { return a.parameter < b.parameter; });
  (side == Side::baseline ? baseline_ : candidate_).push_back(std::move(r));
}

void CohortBuilder::add_unverified(Side side, std::string source, std::string message) {
  unverified_.push_back({side, std::move(source), bounded(std::move(message), 400)});
}

CohortComparison CohortBuilder::compare(const CohortOptions& options) && {
  CohortComparison out;
  out.baseline = std::move(baseline_);
  out.candidate = std::move(candidate_);
  out.unverified = std::move(unverified_);
  out.bootstrap = options.bootstrap;
  out.threshold_percent = options.threshold_percent;

  Reasons reasons;
  for (const UnverifiedInput& u : out.unverified)
    reasons.add(EligibilityCode::unverified_inputs, u.source + " (" +
                                                        std::string(to_string(u.side)) +
                                                        "): not a verified bundle: " + u.message);
  for (Side side : {Side::baseline, Side::candidate}) {
    const std::size_t n = (side == Side::baseline ? out.baseline : out.candidate).size();
    if (n < kMinRunsPerCohort)
      reasons.add(EligibilityCode::insufficient_runs,
                  "the " + std::string(to_string(side)) + " cohort has " + std::to_string(n) +
                      " usable run" + (n == 1 ? "" : "s") + "; at least " +
                      std::to_string(kMinRunsPerCohort) + " are needed");
  }
  std::vector<const CohortRun*> all;
  for (const CohortRun& r : out.baseline) all.push_back(&r);
  for (const CohortRun& r : out.candidate) all.push_back(&r);
  std::map<std::string_view, std::vector<const CohortRun*>> by_id;
  for (const CohortRun* r : all) by_id[r->run_id].push_back(r);
  for (const auto& [id, runs] : by_id) {
    if (runs.size() < 2) continue;
    std::string where;
    for (std::size_t i = 0; i < runs.size() && i < 5; ++i)
      where += (i ? ", " : "") + runs[i]->source;
    if (runs.size() > 5) where += ", …";
    reasons.add(EligibilityCode::duplicate_run_id,
                "run id " + output::quoted_code(bounded(std::string(id))) + " occurs " +
                    std::to_string(runs.size()) + " times: " + where);
  }
  for (const CohortRun* r : all)
    if (!r->trusted)
      reasons.add(EligibilityCode::untrusted_input,
                  label(*r) + " is untrusted: " + r->untrusted_because);
  if (options.steps_as_runs) {
    for (const auto* side : {&out.baseline, &out.candidate}) {
      std::vector<const CohortRun*> runs;
      for (const CohortRun& r : *side) runs.push_back(&r);
      check_conditions(runs, reasons, Conditions::run_identity);
    }
    check_conditions(all, reasons, Conditions::workload);
  } else {
    check_conditions(all, reasons);
  }
  out.reasons = reasons.take();
  out.eligible = out.reasons.empty();

  descriptive_warnings(out.baseline, out.candidate, out.warnings);
  out.pairing = pair_runs(out.baseline, out.candidate, out.warnings);

  const std::size_t nb = out.baseline.size(), nc = out.candidate.size();
  if (nb == 0 || nc == 0) return out;

  // Span keys ranked by the change of their mean total (ties by key), the top ones bootstrapped.
  std::vector<double> sum_b(span_names_.size()), sum_c(span_names_.size());
  std::vector<std::size_t> with_b(span_names_.size()), with_c(span_names_.size());
  for (const CohortRun& r : out.baseline)
    for (const auto& [k, ns] : r.span_totals) sum_b[k] += static_cast<double>(ns), ++with_b[k];
  for (const CohortRun& r : out.candidate)
    for (const auto& [k, ns] : r.span_totals) sum_c[k] += static_cast<double>(ns), ++with_c[k];
  out.span_keys = span_names_.size();
  std::vector<std::uint32_t> ranked(span_names_.size());
  for (std::uint32_t k = 0; k < ranked.size(); ++k) ranked[k] = k;
  auto change = [&](std::uint32_t k) {
    const double d = sum_c[k] / static_cast<double>(nc) - sum_b[k] / static_cast<double>(nb);
    return d < 0 ? -d : d;
  };
  std::sort(ranked.begin(), ranked.end(), [&](std::uint32_t a, std::uint32_t b) {
    const double ca = change(a), cb = change(b);
    return ca != cb ? ca > cb : span_names_[a] < span_names_[b];
  });
  if (ranked.size() > options.max_spans) ranked.resize(options.max_spans);

  std::vector<MetricSample> metrics(2 + ranked.size());
  for (const CohortRun& r : out.baseline) {
    metrics[0].baseline.push_back(static_cast<double>(r.measured_total_ns));
    metrics[1].baseline.push_back(static_cast<double>(r.peak_bytes));
    for (std::size_t i = 0; i < ranked.size(); ++i)
      metrics[2 + i].baseline.push_back(static_cast<double>(span_total(r, ranked[i])));
  }
  for (const CohortRun& r : out.candidate) {
    metrics[0].candidate.push_back(static_cast<double>(r.measured_total_ns));
    metrics[1].candidate.push_back(static_cast<double>(r.peak_bytes));
    for (std::size_t i = 0; i < ranked.size(); ++i)
      metrics[2 + i].candidate.push_back(static_cast<double>(span_total(r, ranked[i])));
  }
  const std::vector<DeltaEstimate> est = bootstrap_deltas(metrics, out.pairing, options.bootstrap);
  if (nb >= 2 && nc >= 2 && options.bootstrap.resamples > 0)
    out.levels = expanded_levels(effective_size(out.pairing, nb, nc), options.bootstrap.confidence);
  // Not eligible: the numbers are shown, but no direction is claimed.
  auto direction = [&](const DeltaEstimate& e) {
    return out.eligible ? judge(e.percent_interval, options.threshold_percent)
                        : Direction::inconclusive;
  };
  out.measured_total = est[0];
  out.verdict = direction(est[0]);
  // The verdict has three values (faster, slower, inconclusive): no measurable change of the
  // measured total is not a finding about speed.
  if (out.verdict == Direction::unchanged) out.verdict = Direction::inconclusive;
  out.peak_bytes = est[1];
  out.peak_direction = direction(est[1]);
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    SpanDelta s;
    s.name = span_names_[ranked[i]];
    s.baseline_runs_with = with_b[ranked[i]];
    s.candidate_runs_with = with_c[ranked[i]];
    s.estimate = est[2 + i];
    s.direction = direction(s.estimate);
    out.spans.push_back(std::move(s));
  }

  // Gradient states: parameters whose mix of states differs between the cohorts (as fractions
  // of each cohort's runs, a run without a fact for the parameter counting as `absent`).
  std::vector<StateCounts> gb(parameter_names_.size()), gc(parameter_names_.size());
  std::vector<std::pair<double, std::size_t>> nb_norm(parameter_names_.size()),
      nc_norm(parameter_names_.size());
  auto count = [](const std::vector<CohortRun>& runs, std::vector<StateCounts>& counts,
                  std::vector<std::pair<double, std::size_t>>& norms) {
    for (const CohortRun& r : runs)
      for (const RunGradient& g : r.gradients) {
        ++counts[g.parameter][static_cast<std::size_t>(g.state)];
        if (g.norm) norms[g.parameter].first += *g.norm, ++norms[g.parameter].second;
      }
    for (StateCounts& c : counts) {
      std::uint32_t seen = 0;
      for (std::size_t s = 0; s < kAbsentState; ++s) seen += c[s];
      c[kAbsentState] = static_cast<std::uint32_t>(runs.size()) - seen;
    }
  };
  count(out.baseline, gb, nb_norm);
  count(out.candidate, gc, nc_norm);
  std::vector<std::uint32_t> changed;
  for (std::uint32_t p = 0; p < parameter_names_.size(); ++p)
    for (std::size_t s = 0; s <= kAbsentState; ++s)
      if (std::uint64_t{gb[p][s]} * nc != std::uint64_t{gc[p][s]} * nb) {
        changed.push_back(p);
        break;
      }
  std::sort(changed.begin(), changed.end(), [&](std::uint32_t a, std::uint32_t b) {
    return parameter_names_[a] < parameter_names_[b];
  });
  out.gradient_changes = changed.size();
  if (changed.size() > options.max_gradients) changed.resize(options.max_gradients);
  auto mean_norm = [](const std::pair<double, std::size_t>& s) -> std::optional<double> {
    if (s.second == 0) return std::nullopt;
    return s.first / static_cast<double>(s.second);
  };
  for (std::uint32_t p : changed)
    out.gradients.push_back(
        {parameter_names_[p], gb[p], gc[p], mean_norm(nb_norm[p]), mean_norm(nc_norm[p])});
  return out;
}

}  // namespace candle_graph::compare
