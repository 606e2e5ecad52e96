// round trip: convert(export(trace)) keeps span names, op counts and durations to
// the µs. The trace comes from `synth` (module spans, three steps, ops with inputs and outputs);
// the export is the real Chrome writer and the conversion the real converter, so the test fails
// when either side of the candle-graph/chrome/1 contract changes without the other.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "export/chrome_trace_writer.hpp"
#include "output/atomic_file.hpp"
#include "support/convert_helpers.hpp"
#include "synth/synthetic_trace.hpp"

namespace cgimport {
namespace {

using candle_graph::TraceDocument;

// (name, start µs, duration µs) per span, sorted: the order of spans may differ between the two
// documents, their content may not.
std::vector<std::tuple<std::string, std::uint64_t, std::uint64_t>> span_rows(
    const TraceDocument& doc) {
  std::vector<std::tuple<std::string, std::uint64_t, std::uint64_t>> rows;
  for (const auto& s : doc.spans())
    rows.emplace_back(std::string(s.name), s.start_ns / 1000, s.duration_ns / 1000);
  std::sort(rows.begin(), rows.end());
  return rows;
}

// (owning span's name, op name, timestamp µs, duration µs) per op, sorted.
std::vector<std::tuple<std::string, std::string, std::uint64_t, std::uint64_t>> op_rows(
    const TraceDocument& doc) {
  std::vector<std::tuple<std::string, std::string, std::uint64_t, std::uint64_t>> rows;
  for (std::size_t i = 0; i < doc.ops().size(); ++i) {
    const auto& op = doc.ops()[i];
    const std::uint32_t span = doc.op_span()[i];
    rows.emplace_back(
        span == candle_graph::kNoIndex ? std::string() : std::string(doc.spans()[span].name),
        std::string(op.op_name), op.timestamp_ns / 1000, op.duration_ns / 1000);
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

// The real Chrome writer's export of `doc`, written atomically to `path`.
void export_chrome(const TraceDocument& doc, const fs::path& path) {
  candle_graph::output::AtomicFile out(path);
  candle_graph::exporting::write_chrome_trace(doc,
                                              [&](std::string_view piece) { out.write(piece); });
  out.commit();
}

TEST(ChromeRoundTrip, ConvertOfExportKeepsSpansOpsAndDurationsToTheMicrosecond) {
  TempDir dir;
  candle_graph::synth::SynthOptions opts;
  opts.layers = 5;
  opts.ops_per_span = 3;
  opts.seed = 11;
  const fs::path original = dir.path() / "synth.jsonl";
  candle_graph::synth::generate_file(opts, original);
  const TraceDocument a = candle_graph::parse_trace(original);
  ASSERT_TRUE(candle_graph::analyze_health(a).trusted);

  const fs::path exported = dir.path() / "synth.chrome.json";
  export_chrome(a, exported);
  const Converted b = convert_and_read(exported, dir.path() / "round.jsonl");
  EXPECT_EQ(b.result.format, "candle-graph-chrome");
  EXPECT_TRUE(b.health.trusted) << error_codes(b.health);

  EXPECT_EQ(b.doc.spans().size(), a.spans().size());
  EXPECT_EQ(b.doc.ops().size(), a.ops().size());
  EXPECT_EQ(span_rows(b.doc), span_rows(a));
  EXPECT_EQ(op_rows(b.doc), op_rows(a));
  // The measured region and the step tags survive too (they decide every later analysis).
  auto measured = [](const TraceDocument& d) {
    std::vector<std::string> names;
    for (const auto& s : d.spans())
      if (s.measured) names.emplace_back(s.name);
    return names;
  };
  EXPECT_EQ(measured(b.doc), measured(a));
}

// An empty name is a name in trace/6: the export writes `"name":""`, and reading it back must
// keep the span and the op (the decoder took an empty name for a missing one and dropped the
// slice, so a trace whose root had no name came back "without span events").
TEST(ChromeRoundTrip, EmptyNamesComeBack) {
  TempDir dir;
  const fs::path original = dir.write(
      "empty-names.jsonl",
      R"({"kind":"meta","schema":"candle-graph/trace/6","run_id":"r","correlation_id":"c",)"
      R"("entrypoint":"e","phase":"infer","timestamp":"2026-01-01T00:00:00.000Z",)"
      R"("capture_step":1,"warmup_steps":0,"device":"cpu",)"
      R"("measured_region_device_synchronized":false,"timing_mode":"host","tags":{}})"
      "\n"
      R"({"kind":"span_start","id":"s1","name":"","start_ns":0,"span_kind":"function",)"
      R"("measured":true})"
      "\n"
      R"({"kind":"op","span_id":"s1","op_name":"","inputs":[],"shape":[],"dtype":"f32",)"
      R"("device":"cpu","duration_ns":2000,"timestamp_ns":1000})"
      "\n"
      R"({"kind":"span_end","id":"s1","duration_ns":5000})"
      "\n");
  const TraceDocument a = candle_graph::parse_trace(original);
  ASSERT_TRUE(candle_graph::analyze_health(a).trusted);
  const fs::path exported = dir.path() / "empty-names.chrome.json";
  export_chrome(a, exported);
  const Converted b = convert_and_read(exported, dir.path() / "round.jsonl");
  EXPECT_TRUE(b.health.trusted) << error_codes(b.health);
  EXPECT_EQ(span_rows(b.doc), span_rows(a));
  EXPECT_EQ(op_rows(b.doc), op_rows(a));
  EXPECT_EQ(b.tag("convert.rejected.missing_name"), "");
}

}  // namespace
}  // namespace cgimport
