// TraceRunMeta::find_tag: the value of one key of the run's tags, whatever their order. The tags
// and the answers are typed in by hand.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "candle_graph/trace_events.hpp"

namespace {

using namespace candle_graph;

TEST(RunTags, FindTagGivesTheValueOfItsKey) {
  // Out of order on purpose: a run built by hand need not sort its tags.
  const std::array<Tag, 3> tags = {Tag{"source.rank", "3"}, Tag{"empty", ""},
                                   Tag{"source.backend", "nccl"}};
  TraceRunMeta run;
  run.tags = tags;
  EXPECT_EQ(run.find_tag("source.rank"), std::optional<std::string_view>("3"));
  EXPECT_EQ(run.find_tag("source.backend"), std::optional<std::string_view>("nccl"));
  // An empty value is a value, not an absent tag.
  EXPECT_EQ(run.find_tag("empty"), std::optional<std::string_view>(""));
  EXPECT_EQ(run.find_tag("source"), std::nullopt);  // a prefix of a key is not the key
  EXPECT_EQ(run.find_tag("source.rank "), std::nullopt);
  EXPECT_EQ(run.find_tag(""), std::nullopt);
  EXPECT_EQ(TraceRunMeta{}.find_tag("source.rank"), std::nullopt);
}

// Whole numbers only, all of the value, in the type's range; the values are typed in by hand.
TEST(RunTags, FindNumberTagReadsAWholeNumberOrNothing) {
  const std::array<Tag, 6> tags = {Tag{"rank", "3"},    Tag{"empty", ""},
                                   Tag{"suffix", "3x"}, Tag{"negative", "-5"},
                                   Tag{"space", " 3"},  Tag{"beyond", "18446744073709551616"}};
  TraceRunMeta run;
  run.tags = tags;
  EXPECT_EQ(run.find_number_tag<std::uint64_t>("rank"), std::optional<std::uint64_t>(3));
  EXPECT_EQ(run.find_number_tag<std::int64_t>("negative"), std::optional<std::int64_t>(-5));
  for (const char* key : {"empty", "suffix", "negative", "space", "beyond", "absent"})
    EXPECT_EQ(run.find_number_tag<std::uint64_t>(key), std::nullopt) << key;
}

}  // namespace
