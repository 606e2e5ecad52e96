// Bootstrap confidence intervals for "how much did the candidate cohort change against the
// baseline cohort?" (comparison/2). The statistic of every metric is the ratio of the
// cohorts' means minus 1, in percent (and, beside it, the difference of the means).
//
// Interval: the *expanded percentile* bootstrap (Hesterberg, "What Teachers Should Know About the
// Bootstrap", The American Statistician 69(4), 2015, trace6.md §4.3). The plain percentile interval
// is too narrow for the 5–10 runs a cohort has (it behaves like mean ± z·s·√((n−1)/n)/√n, about 87
// % coverage at n = 6); the expanded one reads the percentiles at α'/2 = Φ(−√(n/(n−1))·t_{α/2,n−1})
// instead of α/2, which restores the nominal coverage for means of small samples
// (tests/cohort/cohort_statistics_test.cpp measures it).
//
// Resampling: with pairs (run i of the baseline belongs with run i of the candidate) the pair
// indices are resampled, the same index for both sides; without, each side is resampled on its
// own. Indices come from std::mt19937_64 seeded with the caller's seed and are reduced with `%`
// (the bias, n / 2^64, is nil), so a seed gives the same interval with any standard library.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace candle_graph::compare {

struct BootstrapOptions {
  std::uint64_t resamples = 10'000;
  std::uint64_t seed = 1;
  double confidence = 0.95;
};

enum class Pairing : std::uint8_t { independent, paired };

struct Interval {
  double low = 0;
  double high = 0;
};

// One metric of every run of both cohorts, in run order (with Pairing::paired both sides have
// the same length and element i of each is pair i).
struct MetricSample {
  std::vector<double> baseline;
  std::vector<double> candidate;
};

struct DeltaEstimate {
  double baseline_mean = 0;
  double candidate_mean = 0;
  double delta = 0;                        // candidate_mean − baseline_mean
  std::optional<double> delta_percent;     // (candidate_mean / baseline_mean − 1)·100; null when
                                           // the baseline mean is 0
  std::optional<Interval> delta_interval;  // of `delta`; null below 2 runs per side
  std::optional<Interval> percent_interval;  // of `delta_percent`; also null when some resample
                                             // has a baseline mean of 0 (the ratio is undefined)
};

// The percentile levels the expanded percentile interval reads for `n` observations (n >= 2):
// {α'/2, 1 − α'/2}.
Interval expanded_levels(std::size_t n, double confidence);

// The sample size the expansion uses: the number of pairs, or the smaller cohort (the
// conservative choice for two independent samples).
std::size_t effective_size(Pairing pairing, std::size_t baseline_runs, std::size_t candidate_runs);

// Estimates with intervals for every metric. All metrics share the resamples (resample r draws
// the same run indices for each), so metric k's interval does not depend on the other metrics.
// Throws candle_graph::Error when pairing is paired and the sides differ in length.
std::vector<DeltaEstimate> bootstrap_deltas(std::span<const MetricSample> metrics, Pairing pairing,
                                            const BootstrapOptions& options);

// Student's t quantile for integer degrees of freedom (df >= 1, 0 < p < 1): the exact
// closed-form CDF for integer df (Abramowitz & Stegun 26.7.3–4) inverted by bisection.
double student_t_quantile(double p, unsigned df);

// Standard normal CDF (through std::erfc).
double normal_cdf(double x);

// faster / slower (or lower / higher) only when the whole interval lies beyond the threshold
// (in percent, >= 0) on one side; unchanged when every resample gave exactly 0 (identical values
// on both sides, e.g. a deterministic memory peak); inconclusive otherwise, also without an
// interval.
enum class Direction : std::uint8_t { decrease, increase, unchanged, inconclusive };
Direction judge(const std::optional<Interval>& percent_interval, double threshold_percent);

}  // namespace candle_graph::compare
