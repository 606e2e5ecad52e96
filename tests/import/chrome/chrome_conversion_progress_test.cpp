// ImportOptions::converting for a candle-graph Chrome export read back: one unit per span and per
// op or device op placed. The total is checked against the document it produced (counted there,
// not in the importer), the steps against the reporting interval, and watching must not change
// the document.
#include <string>
#include <utility>
#include <vector>

#include "candle_graph/import.hpp"
#include "export/chrome_trace_writer.hpp"
#include "output/atomic_file.hpp"
#include "support/convert_helpers.hpp"
#include "support/sanitizers.hpp"
#include "synth/synthetic_trace.hpp"

namespace cgimport {
namespace {

using candle_graph::TraceDocument;
using Calls = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

fs::path chrome_export_of(const TraceDocument& doc, const fs::path& out) {
  candle_graph::output::AtomicFile file(out);
  candle_graph::exporting::write_chrome_trace(doc,
                                              [&](std::string_view piece) { file.write(piece); });
  file.commit();
  return out;
}

void expect_progress_counts_the_document(const fs::path& exported) {
  const TraceDocument quiet = candle_graph::import_trace(exported).document;
  candle_graph::ImportOptions options;
  Calls calls;
  options.converting = [&](std::uint64_t done, std::uint64_t total) {
    calls.emplace_back(done, total);
  };
  const TraceDocument doc = candle_graph::import_trace(exported, options).document;
  EXPECT_EQ(candle_graph::write_jsonl_string(doc), candle_graph::write_jsonl_string(quiet));

  const std::uint64_t placed = doc.spans().size() + doc.ops().size() + doc.device_ops().size();
  ASSERT_GT(placed, 2u * 4096);  // steps in between, not only the start and the end
  ASSERT_GE(calls.size(), 3u);
  EXPECT_EQ(calls.front().first, 0u);
  EXPECT_EQ(calls.back(), std::make_pair(placed, placed));
  for (std::size_t i = 1; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].second, placed) << "call " << i;
    EXPECT_GT(calls[i].first, calls[i - 1].first) << "call " << i;
    EXPECT_LE(calls[i].first - calls[i - 1].first, 4096u) << "call " << i;
  }
}

TEST(ChromeConversionProgress, CountsSpansAndOps) {
  if (cgtest::kSanitized) GTEST_SKIP() << "slow under ASan; runs in the Release pass";
  TempDir dir;
  candle_graph::synth::SynthOptions opts;
  opts.layers = 3000;
  opts.ops_per_span = 4;
  const fs::path original = dir.path() / "synth.jsonl";
  candle_graph::synth::generate_file(opts, original);
  expect_progress_counts_the_document(
      chrome_export_of(candle_graph::parse_trace(original), dir.path() / "synth.chrome.json"));
}

TEST(ChromeConversionProgress, CountsDeviceWork) {
  if (cgtest::kSanitized) GTEST_SKIP() << "slow under ASan; runs in the Release pass";
  TempDir dir;
  candle_graph::ImportOptions all_steps;
  all_steps.all_steps = true;
  const TraceDocument kineto =
      candle_graph::import_trace(shared_fixture("hta-tracediff-test-v100-nccl-6steps.json.gz"),
                                 all_steps)
          .document;
  ASSERT_GT(kineto.device_ops().size(), 0u);
  expect_progress_counts_the_document(chrome_export_of(kineto, dir.path() / "kineto.chrome.json"));
}

}  // namespace
}  // namespace cgimport
