// The evidence write's progress (`writing OUT: P%` of import and report) counts the elements of
// the packet's large arrays as the stream writes them. Its total (evidence_packet_elements) must
// be what the stream counts, and both what the written document holds: the graph's spans and
// edges and the memory timeline, counted here by parsing the JSON back with nlohmann, not by the
// writer's own bookkeeping. Counting must not change a byte of the text.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "candle_graph/trace_io.hpp"
#include "evidence/evidence_json.hpp"
#include "evidence/packet_builder.hpp"
#include "output/json_stream.hpp"
#include "synth/synthetic_trace.hpp"

namespace {

namespace ev = candle_graph::evidence;
using candle_graph::output::JsonStream;

struct Written {
  std::string text;
  std::uint64_t counted = 0;
  std::uint64_t calls = 0;
};

Written write_counted(const ev::EvidencePacket& p, unsigned threads, bool count) {
  JsonStream w;
  w.set_format_threads(threads);
  Written out;
  if (count)
    w.on_elements_written([&](std::size_t n) {
      out.counted += n;
      ++out.calls;
    });
  ev::write_evidence_packet(w, p);
  w.finish();
  out.text = w.take();
  return out;
}

std::uint64_t large_array_elements(const std::string& text) {
  const nlohmann::json graph = nlohmann::json::parse(text).at("graph");
  return graph.at("spans").size() + graph.at("edges").size() +
         graph.at("memory").at("timeline").size();
}

TEST(EvidenceElements, TheTotalIsWhatTheStreamCountsAndTheDocumentHolds) {
  std::string trace;
  candle_graph::synth::generate({300, 4, 1}, [&](std::string_view piece) { trace.append(piece); });
  const candle_graph::TraceDocument doc = candle_graph::parse_trace_text(trace, "synth.jsonl");
  const ev::EvidencePacket packet = ev::build_packet(doc, nullptr, std::nullopt, std::nullopt);
  // Batches of 7 elements on several threads; on one thread, the serial path's steps of 4096.
  ::setenv("CANDLE_GRAPH_TEST_JSON_BATCH", "7", 1);
  for (unsigned threads : {1u, 2u, 3u}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    const Written counted = write_counted(packet, threads, true);
    const Written plain = write_counted(packet, threads, false);
    EXPECT_EQ(counted.text, plain.text);
    const std::uint64_t held = large_array_elements(counted.text);
    ASSERT_GT(held, 4096u);  // more than one step of the serial path
    EXPECT_EQ(ev::evidence_packet_elements(packet), held);
    EXPECT_EQ(counted.counted, held);
    EXPECT_GT(counted.calls, threads == 1 ? 2u : held / 7 - 3);  // as it goes, not at the end
  }
  ::unsetenv("CANDLE_GRAPH_TEST_JSON_BATCH");
}

}  // namespace
