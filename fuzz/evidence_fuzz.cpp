// libFuzzer target for the analyses behind `import`, `summary` and `report` (src/graph,
// src/memory, src/device, src/evidence, src/output): for every trace/6 file the reader accepts
// and health trusts, and every generated one, the evidence packet is built and written as JSON:
//   - the packet built on 2 threads and written with its large arrays formatted on 3 threads, in
//     batches of 2 elements so that batches meet everywhere, is byte for byte the one-thread
//     text (`import -j N` promises the same bytes);
//   - the evidence and the summary are valid JSON (simdjson's DOM parser);
//   - the Markdown report keeps its own structure whatever the names (report_structure.hpp);
//   - the numbers that must add up do: no node's self time exceeds its total; no point of the
//     memory timeline above the peak, no more frees than allocations; on every device
//     the busy and idle time make the window, the idle time's causes make the idle time, the
//     kernel types (with their overlaps) make the busy time, each class of work and each stream
//     lies within it, the communication hidden by compute within both, and the launch delays'
//     percentiles are ordered (docs/format/pytorch.md, gpu-analyses).
// Input: the trace/6 file, or the recipe of one (generated_trace.hpp).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "evidence/evidence_json.hpp"
#include "evidence/packet_builder.hpp"
#include "evidence/report_digest.hpp"
#include "evidence_laws.hpp"
#include "fuzz_support.hpp"
#include "json_check.hpp"
#include "output/json_stream.hpp"
#include "report_structure.hpp"
#include "trace_input.hpp"

namespace {

using namespace candle_graph;
using candle_graph::fuzz::fail;

struct Texts {
  std::string evidence, summary;
  bool operator==(const Texts&) const = default;
};

evidence::EvidencePacket packet_of(const TraceDocument& doc, unsigned threads) {
  GraphOptions options;
  options.threads = threads;
  return evidence::build_packet(doc, nullptr, std::nullopt, std::nullopt, options);
}

Texts evidence_texts(const evidence::EvidencePacket& packet, unsigned threads) {
  output::JsonStream w;
  w.set_format_threads(threads == 1 ? 1 : 3);
  evidence::write_evidence_packet(w, packet);
  w.finish();
  output::JsonStream summary;
  evidence::write_summary_document(summary, packet);
  summary.finish();
  return {w.take(), summary.take()};
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  return fuzz::set_test_hook("CANDLE_GRAPH_TEST_JSON_BATCH", "2");
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const TraceDocument doc = fuzz::trace_input(data, size, fuzz::Traces::trusted);

  const evidence::EvidencePacket packet = packet_of(doc, 1);
  fuzz::check_evidence_laws(doc, packet);
  const Texts one = evidence_texts(packet, 1);
  if (!(evidence_texts(packet_of(doc, 2), 2) == one))
    fail("the evidence on threads differs from one thread's", one.evidence);
  fuzz::check_valid_json(one.evidence, "the evidence is not valid JSON");
  fuzz::check_valid_json(one.summary, "the summary is not valid JSON");
  fuzz::check_markdown_structure(evidence::render_report(packet), fuzz::report_headings());
  return 0;
}
