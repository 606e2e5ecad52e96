// The ranks of one run side by side (docs/ranks.md): are they one complete run, how far apart do
// their clocks run, who arrives late at the collectives and what it costs the others.
//
// Matching rule: where PyTorch recorded a collective's process group and sequence number
// (record_param_comms' `Process Group Name` and `Seq`), one sequence number of one group is one
// call on every rank of that group; otherwise the k-th call of a collective name (the kernel name
// without its parameters) on one rank is the k-th call of that name on every other rank, for
// names every rank with a clock ran, up to the smallest count. Clocks are aligned on the calls
// every clocked rank took part in. Clocks: on a healthy fabric a collective ends within
// µs on every rank (each waits for the last to arrive), so a rank's offset is the median over the
// matched collectives of (its end − the reference rank's end), the reference being the lowest
// rank; the residual is the largest distance left after removing the offset. Arrival skew of a
// collective = latest aligned start − earliest; the rank with the latest start arrived last and
// made each other rank wait (its start − theirs).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ranks/rank_profile.hpp"

namespace candle_graph::ranks {

// A problem with the set of inputs as a whole; the analysis goes on without what it concerns.
struct HealthFinding {
  std::string code;  // duplicate_rank, missing_ranks, rank_outside_world, world_size_mismatch, ...
  std::string message;
};

struct ClockAlignment {
  std::uint64_t rank = 0;
  std::int64_t offset_ns = 0;     // subtract from the rank's times to put it on the reference's
  std::uint64_t residual_ns = 0;  // max |end − offset − reference end| over the matched calls
};

struct CollectiveSkew {
  std::string name;
  std::string process_group;  // empty when the collective is known by its kernel name only
  std::uint64_t count = 0;    // matched calls
  std::uint64_t mean_skew_ns = 0;
  std::uint64_t max_skew_ns = 0;
};

struct Straggler {
  std::uint64_t rank = 0;
  std::uint64_t times_last = 0;       // matched calls it arrived last at
  std::uint64_t imposed_wait_ns = 0;  // Σ over those calls of (its start − each other's start)
};

struct StepSpread {
  std::uint64_t step = 0;
  std::uint64_t ranks = 0;  // ranks that ran this step
  std::uint64_t slowest_rank = 0;
  std::uint64_t max_wall_ns = 0;
  std::uint64_t median_wall_ns = 0;  // the lower median
  std::uint64_t spread_ns = 0;       // max − median
};

// What the measured region would take if the top straggler arrived at its collectives like the
// median rank. Model: each matched call it arrived last at would start at the next-latest
// arrival instead (that rank is at or after the median), and that saving carries one to one to
// the end of the step of the slowest rank; compute of the straggler itself is taken as it was.
struct StepEstimate {
  std::uint64_t straggler = 0;
  std::uint64_t measured_ns = 0;  // the longest measured region of any rank
  std::uint64_t saved_ns = 0;
  std::uint64_t estimated_ns = 0;
};

struct RanksAnalysis {
  std::vector<RankProfile> ranks;  // by rank, each rank once
  std::vector<HealthFinding> health;
  std::vector<ClockAlignment> clock;        // the ranks put on the reference clock, by rank
  std::vector<CollectiveSkew> collectives;  // by name
  std::vector<Straggler> stragglers;        // by times_last, then imposed_wait_ns, descending
  std::vector<StepSpread> steps;            // by step
  std::optional<StepEstimate> estimate;
  std::vector<std::string> findings;
};

// `profiles` in input order: for a duplicated rank the first is kept.
RanksAnalysis analyze_ranks(std::vector<RankProfile> profiles);

}  // namespace candle_graph::ranks
