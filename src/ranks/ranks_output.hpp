// The ranks analysis as candle-graph/ranks/1 JSON (keys sorted at every level, docs/ranks.md)
// and as a short Markdown report of the same numbers.
#pragma once

#include <string>
#include <string_view>

#include "output/json_stream.hpp"
#include "ranks/rank_analysis.hpp"

namespace candle_graph::ranks {

inline constexpr std::string_view kRanksSchema = "candle-graph/ranks/1";

void write_ranks_json(output::JsonStream& w, const RanksAnalysis& a);
std::string ranks_markdown(const RanksAnalysis& a);

}  // namespace candle_graph::ranks
