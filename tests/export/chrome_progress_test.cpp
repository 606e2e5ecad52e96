// The Chrome export's progress (write_chrome_trace's `progress`): one unit per document event and
// pass over it (span and op slices, the ops' data flows, device slices and their launch flows,
// the memory replay). The
// total is taken from the document here; the sequence must climb in steps of at most 4096 events
// to exactly that total, which a pass left uncounted (a jump at the end) or counted twice (the
// total reached early) breaks. Watching must not change a byte of the export.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "candle_graph/import.hpp"
#include "candle_graph/trace.hpp"
#include "export/chrome_trace_writer.hpp"
#include "support/files.hpp"
#include "support/sanitizers.hpp"
#include "synth/synthetic_trace.hpp"

namespace {

using candle_graph::TraceDocument;
namespace ex = candle_graph::exporting;
using Calls = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

std::string exported(const TraceDocument& doc, unsigned threads, Calls* calls) {
  std::string out;
  candle_graph::ProgressCallback watch;
  if (calls)
    watch = [calls](std::uint64_t done, std::uint64_t total) { calls->emplace_back(done, total); };
  ex::write_chrome_trace(
      doc, [&](std::string_view piece) { out.append(piece); }, threads, {}, watch);
  return out;
}

void expect_progress_climbs_to_the_document(const TraceDocument& doc) {
  const std::uint64_t total =
      doc.spans().size() + 2 * doc.ops().size() + 2 * doc.device_ops().size() + doc.memory().size();
  for (unsigned threads : {1u, 2u}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    Calls calls;
    EXPECT_EQ(exported(doc, threads, &calls), exported(doc, threads, nullptr));
    ASSERT_GE(calls.size(), 2u);
    EXPECT_EQ(calls.front().first, 0u);
    EXPECT_EQ(calls.back().first, total);
    for (std::size_t i = 0; i < calls.size(); ++i) {
      EXPECT_EQ(calls[i].second, total) << "call " << i;
      if (i == 0) continue;
      EXPECT_GT(calls[i].first, calls[i - 1].first) << "call " << i;
      EXPECT_LE(calls[i].first - calls[i - 1].first, 4096u) << "call " << i;
    }
  }
}

TEST(ChromeExportProgress, SynthTraceClimbsEventByEvent) {
  std::string text;
  candle_graph::synth::generate({2000, 4, 1}, [&](std::string_view piece) { text.append(piece); });
  const TraceDocument doc = candle_graph::parse_trace_text(text, "synth.jsonl");
  ASSERT_GT(doc.memory().size(), 4096u);  // every pass is longer than one step
  ASSERT_GT(doc.spans().size() + doc.ops().size(), 4096u);
  expect_progress_climbs_to_the_document(doc);
}

TEST(ChromeExportProgress, KinetoTraceCountsItsDeviceWork) {
  if (cgtest::kSanitized) GTEST_SKIP() << "slow under ASan; runs in the Release pass";
  candle_graph::ImportOptions all_steps;
  all_steps.all_steps = true;
  const TraceDocument doc =
      candle_graph::import_trace(
          candle_graph::testing::shared_fixture(
              "pytorch-chrome-trace/hta-tracediff-test-v100-nccl-6steps.json.gz"),
          all_steps)
          .document;
  ASSERT_GT(doc.device_ops().size(), 4096u);  // each device pass is longer than one step
  expect_progress_climbs_to_the_document(doc);
}

}  // namespace
