// The capture's stated cost (meta tags capture.*, libtorch.md §4.1) in the evidence: a fact in ms
// and in % of the measured total, the report's line beside the total, and a gap iff the share is
// over 10 %. Each trace is built here with known tags and a known measured span; the expected
// figures are computed below from those same numbers (estimate ÷ the span's duration), not taken
// from the code under test.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>

#include "candle_graph/trace_io.hpp"
#include "evidence/evidence_packet.hpp"
#include "evidence/report_digest.hpp"
#include "support/evidence_helpers.hpp"

using namespace candle_graph;

namespace {

struct Tags {
  std::uint64_t per_op_ns = 0;
  std::uint64_t ops = 0;
  std::uint64_t per_memory_ns = 0;
  std::uint64_t memory_events = 0;
  bool with_tags = true;
  std::uint64_t estimate() const { return per_op_ns * ops + per_memory_ns * memory_events; }
};

// A measured span of `measured_ns` holding one op, with the capture.* tags of `t`.
std::string trace_text(const Tags& t, std::uint64_t measured_ns) {
  std::string tags = "\"batch\":\"8\"";
  if (t.with_tags) {
    tags = "\"batch\":\"8\",\"capture.memory_events_recorded\":\"" +
           std::to_string(t.memory_events) + "\",\"capture.ops_recorded\":\"" +
           std::to_string(t.ops) + "\",\"capture.overhead_estimate_ns\":\"" +
           std::to_string(t.estimate()) + "\",\"capture.overhead_per_op_ns\":\"" +
           std::to_string(t.per_op_ns) + "\"";
    if (t.per_memory_ns != 0)
      tags +=
          ",\"capture.overhead_per_memory_event_ns\":\"" + std::to_string(t.per_memory_ns) + "\"";
  }
  const std::string end = std::to_string(measured_ns);
  return "{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/6\",\"run_id\":\"r\","
         "\"correlation_id\":\"demo::update/update-1\",\"entrypoint\":\"demo::update\","
         "\"phase\":\"train\",\"timestamp\":\"2026-08-10T12:00:00.000Z\",\"capture_step\":1,"
         "\"warmup_steps\":0,\"device\":\"cpu\",\"measured_region_device_synchronized\":false,"
         "\"timing_mode\":\"host\",\"tags\":{" +
         tags +
         "}}\n"
         "{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"demo::update\",\"start_ns\":0,"
         "\"span_kind\":\"function\"}\n"
         "{\"kind\":\"span_start\",\"id\":\"s2\",\"parent_id\":\"s1\",\"name\":\"demo/update\","
         "\"start_ns\":100,\"span_kind\":\"function\",\"measured\":true}\n"
         "{\"kind\":\"op\",\"span_id\":\"s2\",\"op_name\":\"aten::mm\",\"dtype\":\"f32\","
         "\"device\":\"cpu\",\"duration_ns\":50,\"timestamp_ns\":200}\n"
         "{\"kind\":\"span_end\",\"id\":\"s2\",\"duration_ns\":" +
         end + "}\n{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":" + end + "00}\n";
}

// The packet holds views into the document: both live together, never moved.
struct Built {
  explicit Built(const std::string& text)
      : doc(parse_trace_text(text)),
        packet(evidence::make_evidence_packet(doc, import::nsight::load_optional(std::nullopt, {}),
                                              std::nullopt)) {}
  Built(const Built&) = delete;
  TraceDocument doc;
  evidence::EvidencePacket packet;
};

std::unique_ptr<Built> build(const Tags& t, std::uint64_t measured_ns) {
  return std::make_unique<Built>(trace_text(t, measured_ns));
}

const evidence::EvidenceFact* fact(const evidence::EvidencePacket& p, std::string_view code) {
  for (const auto& f : p.facts)
    if (f.code == code) return &f;
  return nullptr;
}

bool has_overhead_gap(const evidence::EvidencePacket& p) {
  for (const auto& g : p.gaps)
    if (g.find("capture's own cost") != std::string::npos) return true;
  return false;
}

// The report's figure for a share: one decimal and a percent sign.
std::string percent(double fraction) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f%%", fraction * 100.0);
  return buf;
}

std::string ms(std::uint64_t ns) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f ms", static_cast<double>(ns) / 1e6);
  return buf;
}

constexpr std::uint64_t kMeasuredNs = 2'000'000;  // a 2 ms measured span

TEST(CaptureOverheadEvidence, FactsAndReportLineStateTheEstimateAndItsShare) {
  const Tags t{.per_op_ns = 750, .ops = 412, .per_memory_ns = 120, .memory_events = 174};
  const auto b = build(t, kMeasuredNs);
  const double share = static_cast<double>(t.estimate()) / static_cast<double>(kMeasuredNs);

  const auto* in_ms = fact(b->packet, "capture_overhead");
  const auto* in_percent = fact(b->packet, "capture_overhead_share");
  ASSERT_NE(in_ms, nullptr);
  ASSERT_NE(in_percent, nullptr);
  EXPECT_DOUBLE_EQ(in_ms->value, static_cast<double>(t.estimate()) / 1e6);
  EXPECT_EQ(in_ms->unit, "ms");
  EXPECT_DOUBLE_EQ(in_percent->value, share * 100.0);
  EXPECT_EQ(in_percent->unit, "%");

  const std::string line = "- Capture overhead: ~" + ms(t.estimate()) + " (" + percent(share) +
                           " of the measured total, estimated from 412 recorded ops × 750 ns "
                           "and 174 memory events × 120 ns measured at start; a lower bound)\n";
  const std::string md = evidence::render_markdown(b->packet);
  const auto total = md.find("- Total: ");
  ASSERT_NE(total, std::string::npos);
  EXPECT_EQ(md.find(line), md.find('\n', total) + 1) << "stated right after the total:\n" << md;
  EXPECT_NE(evidence::render_headline(b->packet, evidence::make_report_digest(b->packet))
                .find("Capture cost:   ~" + ms(t.estimate())),
            std::string::npos);
}

TEST(CaptureOverheadEvidence, GapAppearsOnlyAboveTenPercentAndTrustNeverChanges) {
  const auto without = build({.with_tags = false}, kMeasuredNs);
  // 1000 ns per op: ops just under, at and just over a tenth of the measured span.
  const std::uint64_t tenth_ops = kMeasuredNs / 10 / 1000;
  for (const std::uint64_t ops : {tenth_ops - 1, tenth_ops, tenth_ops + 1, 10 * tenth_ops}) {
    const Tags t{.per_op_ns = 1000, .ops = ops};
    const auto b = build(t, kMeasuredNs);
    const bool over = static_cast<double>(t.estimate()) / static_cast<double>(kMeasuredNs) > 0.10;
    EXPECT_EQ(has_overhead_gap(b->packet), over) << ops << " ops";
    EXPECT_EQ(b->packet.health.trusted, without->packet.health.trusted);
    EXPECT_EQ(b->packet.health.issues.size(), without->packet.health.issues.size());
    EXPECT_EQ(b->packet.findings, without->packet.findings);
  }
  EXPECT_FALSE(has_overhead_gap(without->packet));
}

TEST(CaptureOverheadEvidence, WithoutTagsNothingIsAddedAndTheJsonKeepsItsKeys) {
  const auto without = build({.with_tags = false}, kMeasuredNs);
  EXPECT_FALSE(without->packet.capture_overhead);
  EXPECT_EQ(fact(without->packet, "capture_overhead"), nullptr);
  EXPECT_EQ(evidence::render_markdown(without->packet).find("Capture overhead"), std::string::npos);

  const auto with = build({.per_op_ns = 500, .ops = 10}, kMeasuredNs);
  const auto a = cg_test::packet_json(without->packet);
  const auto b = cg_test::packet_json(with->packet);
  std::vector<std::string> keys_a, keys_b;
  for (const auto& [k, v] : a.items()) keys_a.push_back(k);
  for (const auto& [k, v] : b.items()) keys_b.push_back(k);
  EXPECT_EQ(keys_a, keys_b);
  // Additions only: the facts that were there stay first and unchanged.
  ASSERT_EQ(b["facts"].size(), a["facts"].size() + 2);
  for (std::size_t i = 0; i < a["facts"].size(); ++i) EXPECT_EQ(b["facts"][i], a["facts"][i]);
}

}  // namespace
