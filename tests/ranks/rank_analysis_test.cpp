// The cross-rank rules of docs/ranks.md on constructed rank profiles, each expected value worked
// out by hand in the comments (the real and generated runs are in ranks_reference_test.py).
#include <gmock/gmock.h>

#include <algorithm>
#include <tuple>

#include "ranks/rank_analysis.hpp"
#include "ranks/rank_profile.hpp"

namespace {

using candle_graph::ranks::analyze_ranks;
using candle_graph::ranks::collective_name;
using candle_graph::ranks::rank_from_file_name;
using candle_graph::ranks::RankCollective;
using candle_graph::ranks::RankProfile;
using candle_graph::ranks::RanksAnalysis;

RankProfile rank(std::uint64_t r, std::int64_t clock, std::uint64_t wall,
                 std::vector<RankCollective> collectives) {
  RankProfile p;
  p.file = "rank" + std::to_string(r) + ".json";
  p.rank = r;
  p.world_size = 3;
  p.region_start_ns = clock;
  p.region_ns = wall;
  p.steps = {{10, wall}};
  p.collectives = std::move(collectives);
  return p;
}

std::vector<std::string> codes(const RanksAnalysis& a) {
  std::vector<std::string> out;
  for (const auto& h : a.health) out.push_back(h.code);
  return out;
}

TEST(RankFromFileName, TheMentionFurthestRightWins) {
  EXPECT_EQ(rank_from_file_name("worker3_step_12.1694128201557.pt.trace.json"), 3u);
  EXPECT_EQ(rank_from_file_name("rank-12.json"), 12u);
  EXPECT_EQ(rank_from_file_name("RANK_5.json.gz"), 5u);
  EXPECT_EQ(rank_from_file_name("job_rank7_worker2.json"), 2u);
  EXPECT_EQ(rank_from_file_name("trace.json"), std::nullopt);
  EXPECT_EQ(rank_from_file_name("rank.json"), std::nullopt);
  EXPECT_EQ(rank_from_file_name("workers.json"), std::nullopt);
}

TEST(CollectiveName, IsTheKernelNameWithoutItsParameters) {
  EXPECT_EQ(collective_name("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"),
            "ncclKernel_AllReduce_RING_LL_Sum_float");
  EXPECT_EQ(collective_name("ncclDevKernel_Generic"), "ncclDevKernel_Generic");
}

// Three ranks: rank 1's clock runs 10,000 ns ahead of rank 0's, rank 2's 50 ns behind. Every
// matched end differs from rank 0's by exactly that, so the offsets are 10000 and −50 with no
// residual. On the aligned clock:
//   AllReduce #0 starts 100 / 300 / 100: rank 1 last, skew 200, wait 200 + 200 = 400, 200 behind
//     the next-latest;
//   AllReduce #1 starts 1000 / 1000 / 1200: rank 2 last, skew 200, wait 400;
//   Broadcast #0 starts 700 / 700 / 600: ranks 0 and 1 tie, the lowest (0) is last, skew 100,
//     wait 0 + 100 = 100.
// Stragglers: each last once; by wait: rank 1 (400), rank 2 (400, after rank 1), rank 0 (100).
// Estimate: rank 1 saves 200 of the longest region (2,100) → 1,900.
// Step 10: walls 2000 / 2100 / 1900: slowest rank 1, lower median 2000, spread 100.
RanksAnalysis three_ranks() {
  std::vector<RankProfile> in;
  in.push_back(rank(0, 0, 2000,
                    {{"ncclKernel_AllReduce", "", {{100, 500, {}}, {1000, 1500, {}}}, 900},
                     {"ncclKernel_Broadcast", "", {{700, 900, {}}}, 200}}));
  in.push_back(rank(1, 10000, 2100,
                    {{"ncclKernel_AllReduce", "", {{10300, 10500, {}}, {11000, 11500, {}}}, 700},
                     {"ncclKernel_Broadcast", "", {{10700, 10900, {}}}, 200}}));
  in.push_back(rank(2, -50, 1900,
                    {{"ncclKernel_AllReduce", "", {{50, 450, {}}, {1150, 1450, {}}}, 700},
                     {"ncclKernel_Broadcast", "", {{550, 850, {}}}, 300}}));
  return analyze_ranks(std::move(in));
}

TEST(AnalyzeRanks, ClocksSkewsStragglersAndTheEstimate) {
  const RanksAnalysis a = three_ranks();
  EXPECT_TRUE(a.health.empty());
  ASSERT_EQ(a.clock.size(), 3u);
  EXPECT_EQ(a.clock[1].offset_ns, 10000);
  EXPECT_EQ(a.clock[2].offset_ns, -50);
  for (const auto& c : a.clock) EXPECT_EQ(c.residual_ns, 0u);
  ASSERT_EQ(a.collectives.size(), 2u);
  EXPECT_EQ(a.collectives[0].name, "ncclKernel_AllReduce");
  EXPECT_EQ(a.collectives[0].count, 2u);
  EXPECT_EQ(a.collectives[0].mean_skew_ns, 200u);
  EXPECT_EQ(a.collectives[0].max_skew_ns, 200u);
  EXPECT_EQ(a.collectives[1].max_skew_ns, 100u);
  ASSERT_EQ(a.stragglers.size(), 3u);
  EXPECT_EQ(a.stragglers[0].rank, 1u);
  EXPECT_EQ(a.stragglers[0].imposed_wait_ns, 400u);
  EXPECT_EQ(a.stragglers[1].rank, 2u);
  EXPECT_EQ(a.stragglers[2].rank, 0u);
  EXPECT_EQ(a.stragglers[2].imposed_wait_ns, 100u);
  ASSERT_TRUE(a.estimate);
  EXPECT_EQ(a.estimate->straggler, 1u);
  EXPECT_EQ(a.estimate->saved_ns, 200u);
  EXPECT_EQ(a.estimate->estimated_ns, 1900u);
  ASSERT_EQ(a.steps.size(), 1u);
  EXPECT_EQ(a.steps[0].slowest_rank, 1u);
  EXPECT_EQ(a.steps[0].median_wall_ns, 2000u);
  EXPECT_EQ(a.steps[0].spread_ns, 100u);
}

// Collectives with PyTorch's process group and sequence number. The world group "0" runs two
// allreduces (seq 1 and 2) on all three ranks; subgroup "1" of ranks 0 and 1 runs one (seq 7).
// Rank 1 lists its world calls in the other order (seq 2 first): matching by seq must not care.
// All clocks agree (ends equal), so offsets are 0 from the world calls; the subgroup call is
// matched on its two ranks only: starts 100 / 400 → rank 1 last, skew 300, wait 300. World call
// seq 1 starts 0 / 0 / 50 → rank 2 last, skew 50, wait 100; seq 2 starts 600 on all → tie, rank
// 0 last with skew 0. So: rank 1 last once (300), rank 2 once (100), rank 0 once (0).
TEST(AnalyzeRanks, ProcessGroupsAndSequenceNumbersMatchSubgroups) {
  using candle_graph::ranks::CollectiveCall;
  auto world = [](std::vector<CollectiveCall> calls) {
    return RankCollective{"allreduce", "0", std::move(calls), 0};
  };
  std::vector<RankProfile> in;
  in.push_back(rank(
      0, 0, 1000,
      {world({{0, 500, 1}, {600, 900, 2}}), RankCollective{"allreduce", "1", {{100, 700, 7}}, 0}}));
  in.push_back(rank(
      1, 0, 1000,
      {world({{600, 900, 2}, {0, 500, 1}}), RankCollective{"allreduce", "1", {{400, 700, 7}}, 0}}));
  in.push_back(rank(2, 0, 1000, {world({{50, 500, 1}, {600, 900, 2}})}));
  const RanksAnalysis a = analyze_ranks(std::move(in));
  EXPECT_THAT(codes(a), testing::IsEmpty());
  // (process group, count, max skew) per collective; (rank, imposed wait) per straggler.
  std::vector<std::tuple<std::string, std::uint64_t, std::uint64_t>> collectives;
  for (const auto& c : a.collectives)
    collectives.emplace_back(c.process_group, c.count, c.max_skew_ns);
  EXPECT_THAT(collectives,
              testing::ElementsAre(std::make_tuple("0", 2u, 50u), std::make_tuple("1", 1u, 300u)));
  std::vector<std::pair<std::uint64_t, std::uint64_t>> stragglers;
  for (const auto& s : a.stragglers) stragglers.emplace_back(s.rank, s.imposed_wait_ns);
  EXPECT_THAT(stragglers, testing::ElementsAre(std::make_pair(1u, 300u), std::make_pair(2u, 100u),
                                               std::make_pair(0u, 0u)));
  for (const auto& c : a.clock) EXPECT_EQ(c.offset_ns, 0) << c.rank;
}

TEST(AnalyzeRanks, HealthOfTheSetAndTheAnalysisGoesOn) {
  std::vector<RankProfile> in;
  in.push_back(
      rank(0, 0, 1000,
           {{"ncclA", "", {{0, 10, {}}, {20, 30, {}}}, 20}, {"ncclB", "", {{40, 50, {}}}, 10}}));
  in.push_back(rank(1, 0, 1000, {{"ncclA", "", {{0, 10, {}}}, 10}}));  // one A fewer, no B
  in.push_back(rank(1, 0, 1000, {}));                                  // a duplicate: dropped
  in.push_back(rank(5, 0, 1000, {}));                                  // outside world_size 3
  in.back().region_start_ns.reset();                                   // and on no known clock
  in.back().steps = {{11, 1000}};                                      // of another window
  const RanksAnalysis a = analyze_ranks(std::move(in));
  EXPECT_THAT(codes(a),
              ::testing::ElementsAre("duplicate_rank", "rank_outside_world", "missing_ranks",
                                     "step_mismatch", "clock_unknown", "collective_count_mismatch",
                                     "collective_not_on_every_rank"));
  EXPECT_EQ(a.ranks.size(), 3u);
  ASSERT_EQ(a.collectives.size(), 1u);  // ncclA, its first call only
  EXPECT_EQ(a.collectives[0].count, 1u);
  EXPECT_EQ(a.clock.size(), 2u);  // ranks 0 and 1
}

TEST(AnalyzeRanks, NoCommonCollectiveMeansNoClockAndNoSkew) {
  std::vector<RankProfile> in;
  in.push_back(rank(0, 0, 1000, {{"ncclA", "", {{0, 10, {}}}, 10}}));
  in.push_back(rank(1, 0, 1000, {{"ncclB", "", {{0, 10, {}}}, 10}}));
  in.back().world_size.reset();
  in.front().world_size.reset();
  const RanksAnalysis a = analyze_ranks(std::move(in));
  EXPECT_THAT(codes(a),
              ::testing::ElementsAre("world_size_unknown", "collective_not_on_every_rank",
                                     "collective_not_on_every_rank", "clocks_not_aligned"));
  EXPECT_TRUE(a.clock.empty());
  EXPECT_TRUE(a.stragglers.empty());
  EXPECT_FALSE(a.estimate);
}

}  // namespace

// world_size is input (a trace's tag, a rank summary): a huge one must be counted, not walked.
TEST(AnalyzeRanks, AHugeWorldSizeIsCountedNotEnumerated) {
  std::vector<RankProfile> in;
  in.push_back(rank(0, 0, 1000, {}));
  in.push_back(rank(2, 0, 1000, {}));
  for (RankProfile& p : in) p.world_size = std::uint64_t{1} << 60;
  const RanksAnalysis a = analyze_ranks(std::move(in));
  ASSERT_THAT(codes(a), ::testing::Contains("missing_ranks"));
  const auto& missing = *std::find_if(a.health.begin(), a.health.end(),
                                      [](const auto& h) { return h.code == "missing_ranks"; });
  // 2^60 − 2 missing; listed 1, 3, 4, ..., 17 (16 of them), then the rest counted.
  EXPECT_EQ(missing.message,
            "1152921504606846974 of 1152921504606846976 ranks have no trace: 1, 3, 4, 5, 6, 7, "
            "8, 9, 10, 11, 12, 13, 14, 15, 16, 17 and 1152921504606846958 more");
}
