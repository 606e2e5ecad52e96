// Timing of the analysis commands, stage by stage, next to the JSON ceiling.
//   evidence_bench stages FILE       every stage once, in order, each timed on its own:
//                                    parse (parse_trace), health (analyze_health), memory
//                                    (analyze_memory), graph / graph_noedges (build_from_trace
//                                    with and without edges; both include analyze_memory),
//                                    packet / packet_sum (make_evidence_packet for import and for
//                                    summary: health + graph + findings, facts, gaps),
//                                    summary_json / import_json (the summary/1 and evidence/1
//                                    documents streamed into a sink that only counts bytes)
//   evidence_bench summary FILE OUT  end to end like `candle-graph summary FILE -o OUT`
//   evidence_bench import FILE OUT   end to end like `candle-graph import FILE -o OUT`
//   evidence_bench parse_many FILE   simdjson DOM parse_many over the same bytes (the ceiling)
// OUT is removed before the timed run if it exists.
// One mode per process, so /usr/bin/time reports the peak RSS of each mode on its own and
// `valgrind --tool=callgrind` can count the instructions of one mode. Every line printed is
// `<stage> <wall s> <cpu s>`; the end-to-end modes add `<bytes> <MB/s>`.
#include <simdjson.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <string>

#include "candle_graph/analysis.hpp"
#include "candle_graph/health.hpp"
#include "candle_graph/trace.hpp"
#include "evidence/evidence_json.hpp"
#include "evidence/evidence_packet.hpp"
#include "json_ceiling.hpp"
#include "output/atomic_file.hpp"
#include "output/json_stream.hpp"

namespace {

using namespace candle_graph;

double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// Times one stage: wall and CPU seconds of `f()`, printed as one line.
template <typename F>
auto timed(const char* stage, F&& f) {
  const auto w0 = std::chrono::steady_clock::now();
  const double c0 = cpu_now();
  auto result = f();
  const double cpu = cpu_now() - c0;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  std::printf("%-13s %.4f %.4f\n", stage, wall, cpu);
  return result;
}

evidence::EvidencePacket packet_of(const TraceDocument& doc, const GraphOptions& options = {}) {
  // What the CLI does without --nsight-dir: GPU evidence unavailable, no baseline.
  import::nsight::NsightEvidence gpu = import::nsight::load_optional(std::nullopt, {});
  return evidence::make_evidence_packet(doc, std::move(gpu), std::nullopt, options);
}

template <typename Write>
std::size_t write_discarding(Write&& write) {
  std::size_t bytes = 0;
  output::JsonStream w([&](std::string_view piece) { bytes += piece.size(); });
  write(w);
  w.finish();
  return bytes;
}

template <typename Write>
void write_file(const std::string& out, Write&& write) {
  output::AtomicFile file(out);
  output::JsonStream w([&](std::string_view piece) { file.write(piece); });
  write(w);
  w.finish();
  file.commit();
}

int run_stages(const std::string& path) {
  const TraceDocument doc = timed("parse", [&] { return parse_trace(path); });
  const TraceHealth health = timed("health", [&] { return analyze_health(doc); });
  if (!health.trusted) return 3;
  timed("memory", [&] { return analyze_memory(doc).timeline.size(); });
  timed("graph", [&] { return build_from_trace(doc, health).nodes.size(); });
  timed("graph_noedges", [&] {
    return build_from_trace(doc, health, GraphOptions{.edges = false, .memory_timeline = false})
        .nodes.size();
  });
  const auto summary_packet = timed("packet_sum", [&] {
    return packet_of(doc, GraphOptions{.edges = false, .memory_timeline = false});
  });
  const auto packet = timed("packet", [&] { return packet_of(doc); });
  timed("summary_json", [&] {
    return write_discarding([&](auto& w) { evidence::write_summary_document(w, summary_packet); });
  });
  const std::size_t bytes = timed("import_json", [&] {
    return write_discarding([&](auto& w) { evidence::write_evidence_packet(w, packet); });
  });
  std::printf("import_bytes  %zu\n", bytes);
  return 0;
}

int run_end_to_end(bool import, const std::string& path, const std::string& out) {
  const TraceDocument doc = parse_trace(path);
  if (import) {
    const auto packet = packet_of(doc);
    write_file(out, [&](auto& w) { evidence::write_evidence_packet(w, packet); });
  } else {
    const auto packet = packet_of(doc, GraphOptions{.edges = false, .memory_timeline = false});
    write_file(out, [&](auto& w) { evidence::write_summary_document(w, packet); });
  }
  return 0;
}

using candle_graph::bench::run_parse_many;

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const bool end_to_end = mode == "summary" || mode == "import";
  if (argc != (end_to_end ? 4 : 3) || !(end_to_end || mode == "stages" || mode == "parse_many")) {
    std::fprintf(stderr, "usage: %s stages|parse_many FILE | summary|import FILE OUT\n", argv[0]);
    return 2;
  }
  const std::string path = argv[2];
  int rc = 2;
  try {
    if (mode == "stages") return run_stages(path);
    const auto bytes = std::filesystem::file_size(path);
    // A previous run's output is removed before the clock starts: replacing it would make the
    // kernel free its page cache (~0.1 s for the 712 MB import of the 295 MB trace) inside the
    // timed run, a cost of repeating the benchmark rather than of the command.
    if (end_to_end) std::filesystem::remove(argv[3]);
    const auto w0 = std::chrono::steady_clock::now();
    const double c0 = cpu_now();
    rc = end_to_end ? run_end_to_end(mode == "import", path, argv[3]) : run_parse_many(path);
    const double cpu = cpu_now() - c0;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    std::printf("%-13s %.4f %.4f %llu %.1f\n", mode.c_str(), s, cpu,
                static_cast<unsigned long long>(bytes), static_cast<double>(bytes) / 1e6 / cpu);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return rc;
}
