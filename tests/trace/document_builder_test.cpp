// TraceDocumentBuilder::reserve sizes the document's arrays for an importer that counted its
// events first. It must only size them: counts too small, exact or far too large give the same
// document, byte for byte, as no reservation at all.
#include <gtest/gtest.h>

#include <optional>

#include "candle_graph/importer.hpp"
#include "candle_graph/trace.hpp"
#include "support/files.hpp"

namespace {

using candle_graph::TraceDocument;
using candle_graph::TraceDocumentBuilder;
using Counts = TraceDocumentBuilder::Counts;

TraceDocument rebuilt(const TraceDocument& source, const std::optional<Counts>& counts) {
  TraceDocumentBuilder builder("rebuilt");
  if (counts) builder.reserve(*counts);
  for (const candle_graph::TraceEvent& e : candle_graph::to_events(source)) builder.add(e);
  return builder.finish();
}

void expect_reserve_changes_nothing(const std::string& fixture) {
  SCOPED_TRACE(fixture);
  const TraceDocument source = candle_graph::parse_trace(candle_graph::testing::fixture(fixture));
  const std::string expected = candle_graph::write_jsonl_string(source);
  const Counts exact{source.spans().size(), source.ops().size(), source.device_ops().size(),
                     source.memory().size()};
  const Counts large{exact.spans + 1000, exact.ops + 1000, exact.device_ops + 1000,
                     exact.memory + 1000};
  for (const std::optional<Counts>& counts :
       {std::optional<Counts>(), std::optional<Counts>(Counts{}),
        std::optional<Counts>(Counts{1, 1, 1, 1}), std::optional<Counts>(exact),
        std::optional<Counts>(large)})
    EXPECT_EQ(candle_graph::write_jsonl_string(rebuilt(source, counts)), expected);
  // The room asked for is there (the arrays did not grow into it by doubling).
  const TraceDocument roomy = rebuilt(source, large);
  EXPECT_GE(roomy.ops().capacity(), large.ops);
  EXPECT_GE(roomy.device_ops().capacity(), large.device_ops);
  EXPECT_GE(roomy.memory().capacity(), large.memory);
  EXPECT_GE(roomy.spans().capacity(), large.spans);
}

TEST(DocumentBuilder, ReserveNeverChangesTheDocument) {
  expect_reserve_changes_nothing("spec_example.jsonl");  // ops, tensors, memory, gradients
  expect_reserve_changes_nothing("device_work.jsonl");   // kernels and runtime calls
}

}  // namespace
