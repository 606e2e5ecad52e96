// libFuzzer target for the analyses behind `import`, `summary` and `report` (src/graph,
// src/memory, src/device, src/evidence, src/output): for every trace/6 file the reader accepts
// and health trusts, and every generated one, the evidence packet is built and written as JSON:
//   - the packet built on 2 threads and written with its large arrays formatted on 3 threads, in
//     batches of 2 elements so that batches meet everywhere, is byte for byte the one-thread
//     text (`import -j N` promises the same bytes);
//   - the evidence and the summary are valid JSON (simdjson's DOM parser);
//   - the numbers that must add up do: no node's self time exceeds its total; no point of the
//     memory timeline above the peak, no more frees than allocations; on every device
//     the busy and idle time make the window, the idle time's causes make the idle time, the
//     kernel types (with their overlaps) make the busy time, each class of work and each stream
//     lies within it, the communication hidden by compute within both, and the launch delays'
//     percentiles are ordered (docs/format/pytorch.md, gpu-analyses).
// Input: the trace/6 file, or the recipe of one (generated_trace.hpp).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "device/gpu_analysis.hpp"
#include "evidence/evidence_json.hpp"
#include "evidence/packet_builder.hpp"
#include "fuzz_support.hpp"
#include "json_check.hpp"
#include "output/json_stream.hpp"
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

void law(bool holds, const char* what, std::uint64_t a, std::uint64_t b) {
  if (!holds) fail(what, std::to_string(a) + " against " + std::to_string(b));
}

void check_laws(const evidence::EvidencePacket& p) {
  for (const GraphNode& n : p.graph.nodes)
    law(n.self_time_ns <= n.total_time_ns, "a node's self time exceeds its total", n.self_time_ns,
        n.total_time_ns);
  const MemoryProfile& memory = p.graph.memory;
  for (const MemoryTimelinePoint& point : memory.timeline)
    law(point.live_bytes <= memory.summary.peak_bytes, "live memory exceeds the peak",
        point.live_bytes, memory.summary.peak_bytes);
  law(memory.summary.free_count <= memory.summary.alloc_count,
      "more frees than allocations in a trusted trace", memory.summary.free_count,
      memory.summary.alloc_count);
  for (const device::DeviceGpu& d : p.gpu_trace.devices) {
    law(d.busy_ns + d.idle_ns == d.window_ns, "busy and idle do not make the window",
        d.busy_ns + d.idle_ns, d.window_ns);
    const std::uint64_t causes = d.idle_host_wait_ns + d.idle_kernel_wait_ns + d.idle_other_ns;
    law(causes == d.idle_ns, "the idle time's causes do not make it", causes, d.idle_ns);
    std::uint64_t typed = 0;
    for (const device::KernelTypeTime& t : d.kernel_types) typed += t.ns;
    law(typed == d.busy_ns, "the kernel types do not make the busy time", typed, d.busy_ns);
    for (std::uint64_t part : {d.compute_ns, d.communication_ns, d.memory_ns})
      law(part <= d.busy_ns, "a class of work exceeds the busy time", part, d.busy_ns);
    for (const device::StreamIdle& s : d.streams)
      law(s.busy_ns <= d.busy_ns, "a stream is busier than its device", s.busy_ns, d.busy_ns);
    law(d.comm_compute_overlap_ns <= std::min(d.compute_ns, d.communication_ns),
        "hidden communication exceeds the compute or the communication", d.comm_compute_overlap_ns,
        std::min(d.compute_ns, d.communication_ns));
    const device::LaunchStats& l = d.launches;
    law(l.p50_delay_ns <= l.p95_delay_ns && l.p95_delay_ns <= l.max_delay_ns &&
            l.mean_delay_ns <= l.max_delay_ns,
        "the launch delays' percentiles are out of order", l.p50_delay_ns, l.max_delay_ns);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  return fuzz::set_test_hook("CANDLE_GRAPH_TEST_JSON_BATCH", "2");
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const TraceDocument doc = fuzz::trace_input(data, size, fuzz::Traces::trusted);

  const evidence::EvidencePacket packet = packet_of(doc, 1);
  check_laws(packet);
  const Texts one = evidence_texts(packet, 1);
  if (!(evidence_texts(packet_of(doc, 2), 2) == one))
    fail("the evidence on threads differs from one thread's", one.evidence);
  fuzz::check_valid_json(one.evidence, "the evidence is not valid JSON");
  fuzz::check_valid_json(one.summary, "the summary is not valid JSON");
  return 0;
}
