// JSON of the cohort comparison `candle-graph/comparison/2` (declaration order, trace6.md §9.5
// layout).
#pragma once

#include "compare/cohort_comparison.hpp"
#include "output/json_stream.hpp"

namespace candle_graph::compare {

// The statistic the interval and the verdict are about, as written into the document.
inline constexpr std::string_view kCohortStatistic =
    "ratio of the mean measured totals (candidate / baseline) minus 1, in percent";
inline constexpr std::string_view kIntervalMethod =
    "expanded percentile bootstrap (Hesterberg 2015): percentiles at Phi(-sqrt(n/(n-1)) * "
    "t(n-1)) instead of alpha/2, n = pairs, or the smaller cohort";

void write_cohort_comparison(output::JsonStream& w, const CohortComparison& c);

}  // namespace candle_graph::compare
