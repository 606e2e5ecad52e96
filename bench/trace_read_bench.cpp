// End-to-end timing of the trace core, one mode per process so that /usr/bin/time can report the
// peak RSS of each mode on its own:
//   trace_read_bench read FILE        parse_trace (simdjson On-Demand, validation) + analyze_health
//   trace_read_bench parse FILE       parse_trace alone (what -j changes)
//   trace_read_bench parse_many FILE  simdjson DOM parse_many over the same bytes, doing nothing
//   with
//                                     the documents: the practical JSON ceiling on this machine
//   trace_read_bench dump FILE        parse_trace, then the document re-written as trace/6 JSONL
//                                     on stdout (no timing line): differential checks of reader
//                                     changes compare this output, old binary vs new
// A third argument THREADS reads with that many threads (ReadOptions::threads; default 1).
// Prints one line: `<mode> <bytes> <seconds> <MB/s>`.
#include <simdjson.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "candle_graph/health.hpp"
#include "candle_graph/trace.hpp"
#include "json_ceiling.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

candle_graph::ReadOptions read_options;

int run_dump(const std::string& path) {
  const std::string text =
      candle_graph::write_jsonl_string(candle_graph::parse_trace(path, read_options));
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

int run_parse(const std::string& path) {
  return candle_graph::parse_trace(path, read_options).event_count() > 0 ? 0 : 1;
}

int run_read(const std::string& path) {
  const auto doc = candle_graph::parse_trace(path, read_options);
  const auto health = candle_graph::analyze_health(doc);
  return health.trusted ? 0 : 3;
}

using candle_graph::bench::run_parse_many;

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: %s read|parse|parse_many|dump FILE [THREADS]\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1], path = argv[2];
  if (argc == 4) read_options.threads = static_cast<unsigned>(std::stoul(argv[3]));
  if (mode == "dump") {
    try {
      return run_dump(path);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return 1;
    }
  }
  const auto bytes = std::filesystem::file_size(path);
  const auto t0 = std::chrono::steady_clock::now();
  int rc = 2;
  try {
    if (mode == "read") rc = run_read(path);
    if (mode == "parse") rc = run_parse(path);
    if (mode == "parse_many") rc = run_parse_many(path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  const double s = seconds_since(t0);
  std::printf("%s %llu %.4f %.1f\n", mode.c_str(), static_cast<unsigned long long>(bytes), s,
              static_cast<double>(bytes) / 1e6 / s);
  return rc;
}
