// Cohort comparison `candle-graph/comparison/2`: is a cohort of candidate runs faster
// or slower than a cohort of baseline runs, with a bootstrap interval, and may the two cohorts be
// compared at all (the eligibility verdict and its typed reasons)?
//
// Each run is reduced, as soon as it is read, to what the statistics need (measured total, the
// trace6.md §9.4 per-span-key totals, peak bytes, gradient states, the identity conditions, run id
// and tags); span keys and parameter names are interned once for all runs. So a cohort costs one
// document at a time plus a few numbers per span key and run, never runs × trace size.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "candle_graph/trace.hpp"
#include "compare/cohort_statistics.hpp"
#include "compare/comparison_parts.hpp"

namespace candle_graph::compare {

inline constexpr std::string_view kCohortComparisonSchema = "candle-graph/comparison/2";
inline constexpr std::size_t kMinRunsPerCohort = 5;
// The tag that pairs run i of the baseline with run i of the candidate (same machine, same slot,
// …). It is a per-run tag, so it is not one of the workload tags that must agree.
inline constexpr std::string_view kPairIdTag = "pair_id";

enum class Side : std::uint8_t { baseline, candidate };
std::string_view to_string(Side s) noexcept;

enum class EligibilityCode : std::uint8_t {
  insufficient_runs,           // fewer than kMinRunsPerCohort usable runs on a side
  duplicate_run_id,            // a run id occurs twice (in a cohort or across both)
  identity_conditions_differ,  // entrypoint/phase/device/timing/warm-up/workload tags differ
  untrusted_input,    // a run's trace is not trusted (trace6.md §6 health has an error issue)
  unverified_inputs,  // a directory input (a bundle) could not be read and verified
};
std::string_view to_string(EligibilityCode c) noexcept;

struct EligibilityReason {
  EligibilityCode code;
  std::string message;
};

// The trace6.md §9.4 comparability conditions of one run.
struct RunConditions {
  // None when it only names a PyTorch profiler trace's file (evidence::entrypoint_names_a_file):
  // runs of one workload then agree on it.
  std::optional<std::string> entrypoint;
  // What a PyTorch profiler trace read as found measured (evidence::measured_region_label).
  std::optional<std::string> region;
  ExecutionPhase phase = ExecutionPhase::train;
  evidence::DeviceIdentity device;
  TimingMode timing_mode = TimingMode::host;
  bool measured_region_device_synchronized = false;
  std::uint64_t warmup_steps = 0;
  // Every tag except the descriptive ones (trace6.md §9.4) and pair_id, sorted by key.
  std::vector<std::pair<std::string, std::string>> workload_tags;
};

struct RunGradient {
  std::uint32_t parameter = 0;  // interned `{root}/{key}`
  GradientState state = GradientState::present;
  std::optional<double> norm;
};

// What one run keeps once its document is gone.
struct CohortRun {
  std::string source;  // the input path as given
  std::string run_id;
  bool trusted = true;
  std::string untrusted_because;  // the health error summary when untrusted
  RunConditions conditions;
  std::optional<std::string> pair_id;
  std::vector<std::pair<std::string, std::string>> descriptive_tags;
  std::uint64_t measured_total_ns = 0;
  std::uint64_t peak_bytes = 0;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> span_totals;  // (interned key, ns) by key
  std::vector<RunGradient> gradients;                                // by parameter
};

struct UnverifiedInput {
  Side side;
  std::string source;
  std::string message;
};

struct CohortOptions {
  BootstrapOptions bootstrap;
  double threshold_percent = 0;  // >= 0
  std::size_t max_spans = 50;
  std::size_t max_gradients = 100;
  // The runs are the profiler steps of one trace per side: entrypoint and device must agree
  // within a side, warmup is the step number and is not compared.
  bool steps_as_runs = false;
};

struct SpanDelta {
  std::string name;  // the trace6.md §9.4 key
  std::size_t baseline_runs_with = 0;
  std::size_t candidate_runs_with = 0;
  DeltaEstimate estimate;  // per run: the key's total ns (0 when a run lacks the key)
  Direction direction = Direction::inconclusive;
};

// Gradient states per parameter, counted over the runs of each cohort (index = GradientState,
// then one slot for runs without a fact for the parameter).
using StateCounts = std::array<std::uint32_t, 5>;
inline constexpr std::size_t kAbsentState = 4;

struct GradientStateChange {
  std::string parameter;
  StateCounts baseline{};
  StateCounts candidate{};
  std::optional<double> baseline_mean_norm;  // over the runs with a norm
  std::optional<double> candidate_mean_norm;
};

struct CohortComparison {
  std::vector<CohortRun> baseline;   // in input order, or the candidate's pairs' order
  std::vector<CohortRun> candidate;  // paired: candidate[i] has baseline[i]'s pair_id
  std::vector<UnverifiedInput> unverified;
  bool eligible = true;
  std::vector<EligibilityReason> reasons;
  std::vector<std::string> warnings;
  Pairing pairing = Pairing::independent;
  BootstrapOptions bootstrap;
  std::optional<Interval> levels;  // the percentile levels read (null without intervals)
  double threshold_percent = 0;
  DeltaEstimate measured_total;
  Direction verdict = Direction::inconclusive;  // inconclusive whenever not eligible
  DeltaEstimate peak_bytes;
  Direction peak_direction = Direction::inconclusive;
  std::size_t span_keys = 0;                   // distinct keys over all runs
  std::vector<SpanDelta> spans;                // ≤ max_spans, largest |mean delta| first
  std::size_t gradient_changes = 0;            // parameters whose state mix differs
  std::vector<GradientStateChange> gradients;  // ≤ max_gradients, by parameter
};

// One run reduced to what the comparison keeps, before its names are numbered: span keys and
// parameters are still text. reduce_run touches no shared state, so runs can be reduced on
// several threads and then added in order (the builder numbers names as runs arrive).
struct ReducedRun {
  CohortRun run;  // without span_totals and gradients
  std::vector<std::pair<std::string, std::uint64_t>> span_totals;
  std::vector<std::pair<std::string, RunGradient>> gradients;  // RunGradient::parameter unset
};
// Health, memory peak and the trace6.md §9.4 aggregates of `doc`.
ReducedRun reduce_run(const TraceDocument& doc, std::string source);

class CohortBuilder {
 public:
  // reduce_run, then add_reduced.
  void add_run(Side side, const TraceDocument& doc, std::string source);
  // Numbers the run's span keys and parameters and keeps it on its side.
  void add_reduced(Side side, ReducedRun reduced);
  // A directory input that could not be read as a verified bundle: reported, never compared.
  void add_unverified(Side side, std::string source, std::string message);
  // Consumes the builder: the runs move into the result.
  CohortComparison compare(const CohortOptions& options) &&;

 private:
  std::uint32_t intern(std::unordered_map<std::string, std::uint32_t>& index,
                       std::vector<std::string>& names, std::string name);
  // The number of a span key, looked for first at position `next` of the previous run's keys
  // (`next` then moves past the key's place there).
  std::uint32_t span_key(std::string key, std::size_t& next);
  std::unordered_map<std::string, std::uint32_t> span_index_;
  std::vector<std::string> span_names_;
  std::vector<std::uint32_t> last_span_keys_;   // the previous run's span keys, in its order
  std::vector<std::uint32_t> last_span_place_;  // per span key: its place there, or kNoIndex
  std::unordered_map<std::string, std::uint32_t> parameter_index_;
  std::vector<std::string> parameter_names_;
  std::vector<CohortRun> baseline_;
  std::vector<CohortRun> candidate_;
  std::vector<UnverifiedInput> unverified_;
};

}  // namespace candle_graph::compare
