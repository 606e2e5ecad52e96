#include "compare/cohort_statistics.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numbers>
#include <random>
#include <string>

#include "candle_graph/error.hpp"

namespace candle_graph::compare {
namespace {

// P(|T| < t) for Student's t with integer df (Abramowitz & Stegun 26.7.3 odd df, 26.7.4 even df).
double t_two_sided(double t, unsigned df) {
  const double theta = std::atan(t / std::sqrt(static_cast<double>(df)));
  const double s = std::sin(theta), c = std::cos(theta), c2 = c * c;
  if (df % 2 == 0) {
    double term = 1, sum = 1;
    for (unsigned k = 2; k + 2 <= df; k += 2) {
      term *= static_cast<double>(k - 1) / static_cast<double>(k) * c2;
      sum += term;
    }
    return s * sum;
  }
  if (df == 1) return 2 * theta / std::numbers::pi;
  double term = c, sum = c;
  for (unsigned k = 3; k + 2 <= df; k += 2) {
    term *= static_cast<double>(k - 1) / static_cast<double>(k) * c2;
    sum += term;
  }
  return 2 / std::numbers::pi * (theta + s * sum);
}

// The type-7 quantiles (Hyndman & Fan: linear between the order statistics lo and lo + 1) of
// `x` at `levels`, the values they have on `x` sorted. Two selections find the order statistics
// without sorting every resample (a sort was a third of a cohort comparison's statistics).
// Reorders `x`.
Interval quantiles(std::vector<double>& x, Interval levels) {
  std::size_t selected = 0;  // x[0, selected) holds values no larger than any after it
  auto at = [&](double p) {
    const double h = static_cast<double>(x.size() - 1) * p;
    const std::size_t lo = static_cast<std::size_t>(std::floor(h));
    if (lo < selected) selected = 0;
    const auto nth = x.begin() + static_cast<std::ptrdiff_t>(lo);
    std::nth_element(x.begin() + static_cast<std::ptrdiff_t>(selected), nth, x.end());
    selected = lo;
    if (lo + 1 >= x.size()) return *nth;
    const double next = *std::min_element(nth + 1, x.end());
    return *nth + (h - static_cast<double>(lo)) * (next - *nth);
  };
  const double low = at(levels.low);
  return {low, at(levels.high)};
}

// One metric's resampled statistics: the difference of the means and, while every resample's
// baseline mean is non-zero, the ratio in percent.
struct Resampled {
  std::vector<double> deltas;
  std::vector<double> percents;
  bool ratio_defined = true;
};

// The resamples of the metrics [first, last), all from one sequence of draws: re-seeded, so
// resample r draws the same run indices for every metric, in whichever group it falls.
void resample_group(std::span<const MetricSample> metrics, std::size_t first, std::size_t last,
                    Pairing pairing, const BootstrapOptions& options,
                    std::vector<Resampled>& stats) {
  const std::size_t nb = metrics.front().baseline.size(), nc = metrics.front().candidate.size();
  stats.resize(last - first);
  for (Resampled& s : stats) {
    s.deltas.clear();
    s.percents.clear();
    s.deltas.reserve(options.resamples);
    s.percents.reserve(options.resamples);
    s.ratio_defined = true;
  }
  std::mt19937_64 rng(options.seed);
  std::vector<std::uint32_t> ib(nb), ic(nc);
  for (std::uint64_t r = 0; r < options.resamples; ++r) {
    for (auto& i : ib) i = static_cast<std::uint32_t>(rng() % nb);
    if (pairing == Pairing::paired)
      ic = ib;
    else
      for (auto& i : ic) i = static_cast<std::uint32_t>(rng() % nc);
    for (std::size_t k = first; k < last; ++k) {
      const MetricSample& m = metrics[k];
      Resampled& s = stats[k - first];
      double sb = 0, sc = 0;
      for (std::uint32_t i : ib) sb += m.baseline[i];
      for (std::uint32_t i : ic) sc += m.candidate[i];
      const double mb = sb / static_cast<double>(nb), mc = sc / static_cast<double>(nc);
      s.deltas.push_back(mc - mb);
      if (mb == 0)
        s.ratio_defined = false;
      else if (s.ratio_defined)
        s.percents.push_back((mc / mb - 1) * 100);
    }
  }
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

}  // namespace

double normal_cdf(double x) {
  return 0.5 * std::erfc(-x / std::numbers::sqrt2);
}

double student_t_quantile(double p, unsigned df) {
  if (!(p > 0 && p < 1) || df == 0) throw Error("student_t_quantile: p must be in (0, 1), df >= 1");
  if (p == 0.5) return 0;
  if (p < 0.5) return -student_t_quantile(1 - p, df);
  const double target = 2 * p - 1;
  double lo = 0, hi = 1;
  while (t_two_sided(hi, df) < target && hi < 1e300) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (t_two_sided(mid, df) < target ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

Interval expanded_levels(std::size_t n, double confidence) {
  const double alpha = 1 - confidence;
  const double nd = static_cast<double>(n);
  const double t = student_t_quantile(1 - alpha / 2, static_cast<unsigned>(n - 1));
  const double a = normal_cdf(-std::sqrt(nd / (nd - 1)) * t);
  return {a, 1 - a};
}

std::size_t effective_size(Pairing pairing, std::size_t baseline_runs, std::size_t candidate_runs) {
  return pairing == Pairing::paired ? baseline_runs : std::min(baseline_runs, candidate_runs);
}

std::vector<DeltaEstimate> bootstrap_deltas(std::span<const MetricSample> metrics, Pairing pairing,
                                            const BootstrapOptions& options) {
  if (metrics.empty()) return {};
  const std::size_t nb = metrics.front().baseline.size(), nc = metrics.front().candidate.size();
  for (const MetricSample& m : metrics)
    if (m.baseline.size() != nb || m.candidate.size() != nc)
      throw Error("bootstrap: every metric needs one value per run");
  if (pairing == Pairing::paired && nb != nc)
    throw Error("bootstrap: a paired comparison needs as many baseline as candidate runs (" +
                std::to_string(nb) + " vs " + std::to_string(nc) + ")");
  std::vector<DeltaEstimate> out(metrics.size());
  if (nb == 0 || nc == 0) return out;
  for (std::size_t k = 0; k < metrics.size(); ++k) {
    DeltaEstimate& e = out[k];
    e.baseline_mean = mean(metrics[k].baseline);
    e.candidate_mean = mean(metrics[k].candidate);
    e.delta = e.candidate_mean - e.baseline_mean;
    if (e.baseline_mean != 0) e.delta_percent = (e.candidate_mean / e.baseline_mean - 1) * 100;
  }
  if (nb < 2 || nc < 2 || options.resamples == 0) return out;
  const Interval levels = expanded_levels(effective_size(pairing, nb, nc), options.confidence);
  // The metrics of a group share one sequence of draws; a group holds at most
  // kResampledBytes of resampled statistics (13 metrics at the default 10,000 resamples, one at
  // a time past 65,536), so that a cohort comparison's memory does not grow with its metrics.
  constexpr std::size_t kResampledBytes = std::size_t{2} << 20;
  const std::size_t per_metric = static_cast<std::size_t>(options.resamples) * 2 * sizeof(double);
  const std::size_t group = std::max<std::size_t>(1, kResampledBytes / per_metric);
  std::vector<Resampled> stats;
  for (std::size_t first = 0; first < metrics.size(); first += group) {
    const std::size_t last = std::min(metrics.size(), first + group);
    resample_group(metrics, first, last, pairing, options, stats);
    for (std::size_t k = first; k < last; ++k) {
      Resampled& s = stats[k - first];
      out[k].delta_interval = quantiles(s.deltas, levels);
      if (s.ratio_defined) out[k].percent_interval = quantiles(s.percents, levels);
    }
  }
  return out;
}

Direction judge(const std::optional<Interval>& percent_interval, double threshold_percent) {
  if (!percent_interval) return Direction::inconclusive;
  if (percent_interval->low > threshold_percent) return Direction::increase;
  if (percent_interval->high < -threshold_percent) return Direction::decrease;
  if (percent_interval->low == 0 && percent_interval->high == 0) return Direction::unchanged;
  return Direction::inconclusive;
}

}  // namespace candle_graph::compare
