// The ranks analysis as candle-graph/ranks/1 JSON (keys sorted at every level, docs/ranks.md)
// and as a short Markdown report of the same numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "output/json_stream.hpp"
#include "ranks/rank_analysis.hpp"

namespace candle_graph::ranks {

inline constexpr std::string_view kRanksSchema = "candle-graph/ranks/1";

// One rank's full viewer page (`ranks --rank-pages DIR`): where it was written and, for the
// Ranks page's link to it, the path relative to that page's directory.
struct RankPage {
  std::uint64_t rank = 0;
  std::string file;
  std::optional<std::string> href;
};

void write_ranks_json(output::JsonStream& w, const RanksAnalysis& a,
                      const std::vector<RankPage>& pages = {});

// One rank's times and identity, the keys from `communication_ns` to `region_start_ns` in sorted
// order, written the same into a rank of ranks/1 and into a rank-summary/1.
void write_rank_times(output::JsonStream& w, const RankProfile& p);
// `untrusted`: why the rank's trace is untrusted, null when it is trusted (after `steps`).
void write_untrusted(output::JsonStream& w, const RankProfile& p);
std::string ranks_markdown(const RanksAnalysis& a, const std::vector<RankPage>& pages = {});

}  // namespace candle_graph::ranks
