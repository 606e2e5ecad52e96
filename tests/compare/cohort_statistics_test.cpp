// Cohort statistics: Student's t quantiles, the expanded percentile levels, the
// coverage of the bootstrap interval on known distributions, determinism per seed, paired vs
// independent resampling, and the verdict rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "candle_graph/error.hpp"
#include "compare/cohort_statistics.hpp"
#include "support/sanitizers.hpp"

namespace {

using namespace candle_graph::compare;

TEST(CohortStatistics, StudentTQuantilesMatchPublishedTables) {
  // Two-sided 95 % (p = 0.975) and one 90 % value, from the NIST/SEMATECH e-Handbook table of
  // upper critical values of Student's t (section 1.3.6.7.2), to the table's 3 decimals.
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.706, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.975, 2), 4.303, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.975, 4), 2.776, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.975, 5), 2.571, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.975, 9), 2.262, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.042, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.95, 10), 1.812, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.025, 5), -2.571, 1e-3);  // symmetric
  EXPECT_EQ(student_t_quantile(0.5, 3), 0.0);
  // Large df tends to the normal quantile 1.95996.
  EXPECT_NEAR(student_t_quantile(0.975, 2000), 1.9612, 1e-3);
  EXPECT_THROW(student_t_quantile(1.0, 3), candle_graph::Error);
  EXPECT_THROW(student_t_quantile(0.9, 0), candle_graph::Error);
}

TEST(CohortStatistics, ExpandedLevelsWidenSmallSamples) {
  // n = 6: Φ(−√(6/5)·t(0.975, 5)) = Φ(−1.09545·2.57058) = Φ(−2.81592) = 0.002432 (normal table).
  const Interval l6 = expanded_levels(6, 0.95);
  EXPECT_NEAR(l6.low, 0.002432, 2e-5);
  EXPECT_NEAR(l6.high, 1 - 0.002432, 2e-5);
  // The expansion fades with n: at n = 1000 the levels are close to the plain 2.5 %.
  EXPECT_NEAR(expanded_levels(1000, 0.95).low, 0.025, 1e-3);
  EXPECT_EQ(effective_size(Pairing::paired, 7, 7), 7u);
  EXPECT_EQ(effective_size(Pairing::independent, 9, 6), 6u);
}

// Draws a cohort of `n` values from N(mean, sd²).
std::vector<double> normal_sample(std::mt19937_64& rng, std::size_t n, double mean, double sd) {
  std::normal_distribution<double> d(mean, sd);
  std::vector<double> v(n);
  for (double& x : v) x = d(rng);
  return v;
}

// Fraction of `trials` intervals (6 runs a side) that contain the true ratio − 1 of the
// population means, 10 %. At a nominal 95 % and 400 trials the standard error is 1.1 points, so
// [0.92, 0.985] accepts a correct interval and rejects the plain percentile interval, whose
// coverage at n = 6 is about 0.87 (mean ± 1.96·s·√(5/6)/√6 has t(5)-coverage 0.866).
double coverage_independent(int trials) {
  std::mt19937_64 data(2024);
  int covered = 0;
  BootstrapOptions o;
  o.resamples = 2000;
  for (int t = 0; t < trials; ++t) {
    MetricSample m{normal_sample(data, 6, 100, 5), normal_sample(data, 6, 110, 5)};
    o.seed = static_cast<std::uint64_t>(t) + 1;
    const DeltaEstimate e = bootstrap_deltas({&m, 1}, Pairing::independent, o).front();
    EXPECT_TRUE(e.percent_interval.has_value());
    if (e.percent_interval && e.percent_interval->low <= 10 && 10 <= e.percent_interval->high)
      ++covered;
  }
  return static_cast<double>(covered) / trials;
}

// Coverage is a property of the statistics, not of memory safety: the sanitizer pass (several
// times slower) skips the two simulations; every other test runs the same code there.
#if CG_TEST_SANITIZED
#define CG_SKIP_SIMULATION() GTEST_SKIP() << "coverage simulation: Release pass only"
#else
#define CG_SKIP_SIMULATION() (void)0
#endif

TEST(CohortStatistics, IndependentIntervalCoversTheTrueRatio) {
  CG_SKIP_SIMULATION();
  const double c = coverage_independent(400);
  std::printf("coverage of the independent interval: %.4f (nominal 0.95)\n", c);
  EXPECT_GE(c, 0.92);
  EXPECT_LE(c, 0.985);
}

// Pairs that share a large per-pair effect (machine, input order…): baseline 100 + p + e,
// candidate 1.05·(100 + p) + e', p ~ N(0, 15²), e ~ N(0, 1): true ratio − 1 = 5 %.
MetricSample paired_sample(std::mt19937_64& rng, std::size_t n) {
  std::normal_distribution<double> pair(0, 15), noise(0, 1);
  MetricSample m;
  for (std::size_t i = 0; i < n; ++i) {
    const double p = pair(rng);
    m.baseline.push_back(100 + p + noise(rng));
    m.candidate.push_back(1.05 * (100 + p) + noise(rng));
  }
  return m;
}

TEST(CohortStatistics, PairedIntervalCoversAndUsesThePairing) {
  CG_SKIP_SIMULATION();
  std::mt19937_64 data(77);
  BootstrapOptions o;
  o.resamples = 2000;
  int covered = 0, paired_excludes_zero = 0, independent_excludes_zero = 0;
  double paired_width = 0, independent_width = 0;
  const int trials = 400;
  for (int t = 0; t < trials; ++t) {
    const MetricSample m = paired_sample(data, 6);
    o.seed = static_cast<std::uint64_t>(t) + 1;
    const DeltaEstimate p = bootstrap_deltas({&m, 1}, Pairing::paired, o).front();
    const DeltaEstimate i = bootstrap_deltas({&m, 1}, Pairing::independent, o).front();
    ASSERT_TRUE(p.percent_interval && i.percent_interval);
    covered += p.percent_interval->low <= 5 && 5 <= p.percent_interval->high;
    paired_excludes_zero += p.percent_interval->low > 0;
    independent_excludes_zero += i.percent_interval->low > 0;
    paired_width += p.percent_interval->high - p.percent_interval->low;
    independent_width += i.percent_interval->high - i.percent_interval->low;
  }
  const double c = static_cast<double>(covered) / trials;
  std::printf("coverage of the paired interval: %.4f (nominal 0.95)\n", c);
  EXPECT_GE(c, 0.92);
  EXPECT_LE(c, 0.985);
  // Pairing removes the shared effect (sd 15 against a 5 % change): the paired interval is far
  // narrower and finds the slowdown nearly always; the independent one rarely does.
  EXPECT_LT(paired_width * 4, independent_width);
  EXPECT_GE(paired_excludes_zero, trials * 9 / 10);
  EXPECT_LE(independent_excludes_zero, trials / 2);
}

TEST(CohortStatistics, DeterministicPerSeed) {
  std::mt19937_64 data(5);
  const MetricSample m{normal_sample(data, 7, 100, 10), normal_sample(data, 5, 103, 10)};
  BootstrapOptions o;
  o.resamples = 3000;
  o.seed = 42;
  const DeltaEstimate a = bootstrap_deltas({&m, 1}, Pairing::independent, o).front();
  const DeltaEstimate b = bootstrap_deltas({&m, 1}, Pairing::independent, o).front();
  ASSERT_TRUE(a.percent_interval && b.percent_interval && a.delta_interval);
  EXPECT_EQ(a.percent_interval->low, b.percent_interval->low);
  EXPECT_EQ(a.percent_interval->high, b.percent_interval->high);
  EXPECT_EQ(a.delta_interval->low, b.delta_interval->low);
  o.seed = 43;
  const DeltaEstimate c = bootstrap_deltas({&m, 1}, Pairing::independent, o).front();
  EXPECT_NE(a.percent_interval->low, c.percent_interval->low);
  // A metric's interval does not depend on the other metrics bootstrapped with it.
  o.seed = 42;
  const MetricSample other{normal_sample(data, 7, 1, 1), normal_sample(data, 5, 2, 1)};
  const std::vector<MetricSample> both{other, m};
  const DeltaEstimate d = bootstrap_deltas(both, Pairing::independent, o)[1];
  EXPECT_EQ(a.percent_interval->low, d.percent_interval->low);
  EXPECT_EQ(a.percent_interval->high, d.percent_interval->high);
}

// The textbook computation, written out here: per metric a generator freshly seeded, each
// resample's means summed in draw order, every resample sorted and read at the type-7 quantiles.
double sorted_quantile(std::vector<double> x, double p) {
  std::sort(x.begin(), x.end());
  const double h = static_cast<double>(x.size() - 1) * p;
  const std::size_t lo = static_cast<std::size_t>(std::floor(h));
  if (lo + 1 >= x.size()) return x.back();
  return x[lo] + (h - static_cast<double>(lo)) * (x[lo + 1] - x[lo]);
}

DeltaEstimate textbook_bootstrap(const MetricSample& m, Pairing pairing,
                                 const BootstrapOptions& o) {
  const std::size_t nb = m.baseline.size(), nc = m.candidate.size();
  const Interval levels = expanded_levels(effective_size(pairing, nb, nc), o.confidence);
  std::mt19937_64 rng(o.seed);
  std::vector<double> deltas, percents;
  bool ratio = true;
  std::vector<std::size_t> ib(nb), ic(nc);
  for (std::uint64_t r = 0; r < o.resamples; ++r) {
    for (auto& i : ib) i = rng() % nb;
    if (pairing == Pairing::paired)
      ic = ib;
    else
      for (auto& i : ic) i = rng() % nc;
    double sb = 0, sc = 0;
    for (std::size_t i : ib) sb += m.baseline[i];
    for (std::size_t i : ic) sc += m.candidate[i];
    const double mb = sb / static_cast<double>(nb), mc = sc / static_cast<double>(nc);
    deltas.push_back(mc - mb);
    ratio = ratio && mb != 0;
    if (ratio) percents.push_back((mc / mb - 1) * 100);
  }
  DeltaEstimate e;
  e.delta_interval =
      Interval{sorted_quantile(deltas, levels.low), sorted_quantile(deltas, levels.high)};
  if (ratio)
    e.percent_interval =
        Interval{sorted_quantile(percents, levels.low), sorted_quantile(percents, levels.high)};
  return e;
}

void expect_same_interval(const std::optional<Interval>& got, const std::optional<Interval>& want) {
  ASSERT_EQ(got.has_value(), want.has_value());
  if (!want) return;
  EXPECT_EQ(got->low, want->low);  // the same order statistics: bit for bit
  EXPECT_EQ(got->high, want->high);
}

// The intervals are those of sorting every resample, for every metric, whether the metrics are
// resampled together (1,000 resamples) or, past 2 MiB of resampled values, in groups (60,000
// resamples: two metrics, then one). The third metric's baseline is often 0 in a resample, so its
// ratio is undefined.
TEST(CohortStatistics, IntervalsAreThoseOfSortingEveryResample) {
  std::mt19937_64 data(9);
  const std::vector<MetricSample> metrics{
      {normal_sample(data, 6, 100, 10), normal_sample(data, 6, 104, 10)},
      {normal_sample(data, 6, 5, 3), normal_sample(data, 6, 5, 3)},
      {{0, 0, 0, 7, 0, 3}, {1, 2, 1, 2, 1, 2}}};
  struct Case {
    Pairing pairing;
    std::uint64_t resamples;
  };
  for (const Case c : {Case{Pairing::independent, 1000}, Case{Pairing::paired, 1000},
                       Case{Pairing::independent, 60'000}}) {
    BootstrapOptions o;
    o.resamples = c.resamples;
    o.seed = 7;
    const std::vector<DeltaEstimate> got = bootstrap_deltas(metrics, c.pairing, o);
    ASSERT_EQ(got.size(), metrics.size());
    for (std::size_t k = 0; k < metrics.size(); ++k) {
      SCOPED_TRACE(::testing::Message() << "resamples " << c.resamples << ", metric " << k);
      const DeltaEstimate want = textbook_bootstrap(metrics[k], c.pairing, o);
      expect_same_interval(got[k].delta_interval, want.delta_interval);
      expect_same_interval(got[k].percent_interval, want.percent_interval);
    }
    EXPECT_FALSE(got[2].percent_interval.has_value());
  }
}

TEST(CohortStatistics, PointEstimatesAndUndefinedRatios) {
  // Means 2 and 3: delta 1, +50 %.
  const MetricSample m{{1, 2, 3}, {2, 3, 4}};
  const DeltaEstimate e = bootstrap_deltas({&m, 1}, Pairing::paired, {}).front();
  EXPECT_DOUBLE_EQ(e.baseline_mean, 2);
  EXPECT_DOUBLE_EQ(e.candidate_mean, 3);
  EXPECT_DOUBLE_EQ(e.delta, 1);
  EXPECT_DOUBLE_EQ(*e.delta_percent, 50);
  // Paired with a constant difference of 1: every resample's delta is exactly 1.
  EXPECT_DOUBLE_EQ(e.delta_interval->low, 1);
  EXPECT_DOUBLE_EQ(e.delta_interval->high, 1);
  // A key absent from some baseline runs: a resample of only those has baseline mean 0, so the
  // ratio is undefined there and no percent interval is claimed (the ns interval still is).
  const MetricSample z{{0, 0, 5}, {1, 1, 1}};
  const DeltaEstimate ez = bootstrap_deltas({&z, 1}, Pairing::independent, {}).front();
  EXPECT_FALSE(ez.percent_interval.has_value());
  EXPECT_TRUE(ez.delta_interval.has_value());
  // One run a side: point estimates only.
  const MetricSample one{{4}, {6}};
  const DeltaEstimate e1 = bootstrap_deltas({&one, 1}, Pairing::independent, {}).front();
  EXPECT_DOUBLE_EQ(*e1.delta_percent, 50);
  EXPECT_FALSE(e1.percent_interval.has_value());
  const MetricSample uneven{{1, 2}, {1, 2, 3}};
  EXPECT_THROW(bootstrap_deltas({&uneven, 1}, Pairing::paired, {}), candle_graph::Error);
}

TEST(CohortStatistics, VerdictNeedsTheWholeIntervalBeyondTheThreshold) {
  EXPECT_EQ(judge(Interval{0.5, 3}, 0), Direction::increase);
  EXPECT_EQ(judge(Interval{0.5, 3}, 1), Direction::inconclusive);
  EXPECT_EQ(judge(Interval{-3, -1.5}, 1), Direction::decrease);
  EXPECT_EQ(judge(Interval{-3, 0.1}, 0), Direction::inconclusive);
  EXPECT_EQ(judge(Interval{0, 0}, 0), Direction::unchanged);  // every resample identical
  EXPECT_EQ(judge(Interval{0, 0}, 2), Direction::unchanged);
  EXPECT_EQ(judge(std::nullopt, 0), Direction::inconclusive);
}

}  // namespace
