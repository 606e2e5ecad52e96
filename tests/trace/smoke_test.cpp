#include <gtest/gtest.h>
#include "candle_graph/trace.hpp"
TEST(Smoke, SchemaConstant) { EXPECT_EQ(candle_graph::kTraceSchema, "candle-graph/trace/6"); }
