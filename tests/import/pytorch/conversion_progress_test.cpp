// ImportOptions::converting: the progress of placing a PyTorch trace's events into the document
// after the read: 0 of 1 at its start, then the count. Its total is checked against the document
// it produced (the ops, device work and memory events the document holds, counted there rather
// than in the importer), and watching the progress must not change the document.
#include <utility>
#include <vector>

#include "candle_graph/import.hpp"
#include "support/convert_helpers.hpp"

namespace cgimport {
namespace {

using Calls = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

// Two allocations and a free inside ProfilerStep#1, around one op: the fixtures have no memory
// events.
constexpr const char* kTwoAllocsAndAFree = R"({"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":1000,"dur":100},
{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":1010,"args":{"Device Type":1,"Device Id":0,"Addr":100,"Bytes":1000}},
{"ph":"X","cat":"cpu_op","name":"aten::empty","pid":1,"tid":1,"ts":1011,"dur":2},
{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":1020,"args":{"Device Type":1,"Device Id":0,"Addr":200,"Bytes":64}},
{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":1030,"args":{"Device Type":1,"Device Id":0,"Addr":100,"Bytes":-1000}}
]})";

void expect_progress_counts_the_document(const fs::path& trace) {
  SCOPED_TRACE(trace.filename().string());
  candle_graph::ImportOptions options;
  options.all_steps = true;
  const candle_graph::ImportedTrace quiet = candle_graph::import_trace(trace, options);
  Calls calls;
  options.converting = [&](std::uint64_t done, std::uint64_t total) {
    calls.emplace_back(done, total);
  };
  const candle_graph::ImportedTrace watched = candle_graph::import_trace(trace, options);
  const candle_graph::TraceDocument& doc = watched.document;
  EXPECT_EQ(candle_graph::write_jsonl_string(doc),
            candle_graph::write_jsonl_string(quiet.document));

  const std::uint64_t placed = doc.ops().size() + doc.device_ops().size() + doc.memory().size();
  ASSERT_GT(placed, 0u);
  // First 0 of 1, as the placing starts and before its count is known (so that a progress line
  // shows from the start); then 0 to all of the count.
  ASSERT_GE(calls.size(), 3u);
  EXPECT_EQ(calls.front(), std::make_pair(std::uint64_t{0}, std::uint64_t{1}));
  calls.erase(calls.begin());
  EXPECT_EQ(calls.front().first, 0u);
  EXPECT_EQ(calls.back(), std::make_pair(placed, placed));
  for (std::size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].second, placed) << "call " << i;
    if (i > 0) {
      EXPECT_GE(calls[i].first, calls[i - 1].first) << "call " << i;
    }
  }
}

TEST(ConversionProgress, CountsEveryOpAndDeviceOpOfRealTraces) {
  expect_progress_counts_the_document(shared_fixture("hta-simple_add-a100.json"));
  expect_progress_counts_the_document(shared_fixture("hta-minitoy-train-mi250-rocm6.2.json"));
  expect_progress_counts_the_document(shared_fixture("hta-alexnet-a100-2streams.json.gz"));
}

TEST(ConversionProgress, CountsMemoryEvents) {
  TempDir dir;
  const fs::path trace = dir.write("memory.json", kTwoAllocsAndAFree);
  expect_progress_counts_the_document(trace);
  EXPECT_EQ(candle_graph::import_trace(trace).document.memory().size(), 3u);
}

}  // namespace
}  // namespace cgimport
