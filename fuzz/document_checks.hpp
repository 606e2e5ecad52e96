// Checks every importer's document must pass: what an importer returns is a trace/6 document,
// so our writer must turn it into text our reader accepts, and reading that text back must give
// the same document (the converted trace a user writes with `convert` must open again, and a
// PyTorch trace's must be trusted, as `convert` promises); and
// `-j`, which moves the scan to a second thread, must not change what an import gives.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "candle_graph/error.hpp"
#include "candle_graph/health.hpp"
#include "candle_graph/importer.hpp"
#include "candle_graph/trace.hpp"
#include "fuzz_support.hpp"

namespace candle_graph::fuzz {

inline void check_round_trip(const TraceDocument& doc) {
  const std::string written = write_jsonl_string(doc);
  try {
    const TraceDocument again = parse_trace_text(written, "rewritten.jsonl");
    if (!(again == doc)) fail("parse(write(imported)) != imported", written);
  } catch (const Error& e) {
    fail("the writer produced a trace the reader rejects", std::string(e.what()) + "\n" + written);
  }
}

// A rejection must name the input file and say something.
inline void check_error(const Error& e, std::string_view file_name) {
  const std::string what = e.what();
  if (e.message().empty() || what.find(file_name) == std::string::npos)
    fail("an error that does not name the file", what);
}

enum class Converted { any, trusted };

// Reads `path` with `options` on one thread and again with the scan on a second one (`-j 2`):
// both reads must end alike, in an equal document and import report or in the same error. The
// document must round-trip through trace/6 (and, for an importer that promises it, be one health
// trusts unless it holds several processes) and the error must name `file_name`.
// Returns the document of the one-thread read, or nothing when it failed.
inline std::optional<TraceDocument> check_import_on_one_and_two_threads(
    const Importer& importer, const std::filesystem::path& path, ImportOptions options,
    std::string_view file_name, Converted converted = Converted::any) {
  std::optional<ImportedTrace> one;
  std::optional<Error> one_error;
  options.threads = 1;
  try {
    one = importer.read(path, options);
    check_round_trip(one->document);
    if (converted == Converted::trusted) {
      // Untrusted by design, and only so: a file holding the host ops of several processes.
      for (const HealthIssue& i : analyze_health(one->document).issues)
        if (i.severity == HealthSeverity::error && i.code != "processes_merged")
          fail("an accepted trace converts into one health does not trust", i.message);
    }
  } catch (const Error& e) {
    check_error(e, file_name);
    one_error = e;
  }
  options.threads = 2;
  try {
    const ImportedTrace two = importer.read(path, options);
    if (!one) fail("only the read on two threads took the file", one_error->what());
    if (!(two.document == one->document)) fail("the documents of -j 1 and -j 2 differ", "");
    const ImportReport &a = one->report, &b = two.report;
    if (a.format != b.format || a.measured != b.measured || a.source_events != b.source_events ||
        a.repairs != b.repairs)
      fail("the import reports of -j 1 and -j 2 differ", "");
  } catch (const Error& e) {
    if (one) fail("only the read on one thread took the file", e.what());
    if (!same_error(e, *one_error))
      fail("-j 1 and -j 2 failed differently", std::string(one_error->what()) + "\n" + e.what());
  }
  if (!one) return std::nullopt;
  return std::move(one->document);
}

}  // namespace candle_graph::fuzz
