// One rank's RankProfile as a document of its own, candle-graph/rank-summary/1 (docs/ranks.md):
// the map stage of a cluster fan-out writes it next to the rank's trace (`ranks --map`), the
// reduce stage reads every rank's summary back (`ranks --reduce`) and merges them exactly as a
// local `ranks DIR` run merges the profiles it reduced itself. It holds what the merge needs and
// nothing it can derive: a collective's total time is the sum of its calls, the overlap ratio
// follows from communication and exposed communication.
#pragma once

#include <filesystem>
#include <string_view>

#include "output/json_stream.hpp"
#include "ranks/rank_profile.hpp"

namespace candle_graph::ranks {

inline constexpr std::string_view kRankSummarySchema = "candle-graph/rank-summary/1";

// Keys sorted at every level; each collective call is `[start_ns, end_ns]`.
void write_rank_summary(output::JsonStream& w, const RankProfile& p);

// Reads a summary back into the profile it was written from. The file is untrusted (it crossed
// a cluster's file system): anything but a complete, well-typed summary of this schema, with
// times within ±2^62 ns and a profile that is consistent with itself, throws Error naming `file`.
RankProfile read_rank_summary(const std::filesystem::path& file);

}  // namespace candle_graph::ranks
