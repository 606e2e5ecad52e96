// `export TRACE... --format sqlite -o runs.db [--append] [--nsight-dir DIR]`: every trace and its
// analysis as one run of a candle-graph/sql/1 database (src/export/sqlite_*).
#include <cstdio>
#include <filesystem>
#include <string>

#include "candle_graph/error.hpp"
#include "cli/analysis_support.hpp"
#include "cli/command.hpp"
#include "output/atomic_file.hpp"
#include "sqlite/sqlite_export.hpp"

namespace candle_graph::cli {

int run_export_sqlite(const ExportArgs& args) {
  for (const auto& in : args.traces)
    if (output::same_file(in, args.output))
      throw UsageError("refusing to write output over the input file " + in.string());
  std::error_code ec;
  if (!args.append && std::filesystem::exists(args.output, ec))
    throw UsageError(args.output.string() +
                     ": the database exists; pass --append to add runs to it, or choose another "
                     "path");
  sqlite::DatabaseFile db(args.output, args.append);
  std::uint64_t ops = 0, input_bytes = 0;
  for (std::size_t i = 0; i < args.traces.size(); ++i) {
    const std::filesystem::path& trace = args.traces[i];
    const TraceDocument doc = load_trace(trace, args.step);
    const std::uint64_t bytes = trace_bytes(trace);
    input_bytes += bytes;
    std::string what = "writing " + args.output.string() + " (";
    if (args.traces.size() > 1)
      what += "run " + std::to_string(i + 1) + " of " + std::to_string(args.traces.size()) + ", ";
    try {
      db.add_run(
          doc, trace.string(), [&] { return build_evidence(doc, nullptr, args.nsight_dir); },
          database_progress(what, bytes));
    } catch (const Error& e) {
      if (e.path().empty()) throw Error(trace.string(), 0, e.message());
      throw;
    }
    ops += doc.ops().size();
  }
  db.commit(database_progress("writing " + args.output.string() + " (", input_bytes));
  std::fprintf(stderr, "wrote %s: %zu run%s, %llu ops\n", args.output.string().c_str(),
               args.traces.size(), args.traces.size() == 1 ? "" : "s",
               static_cast<unsigned long long>(ops));
  return kExitOk;
}

}  // namespace candle_graph::cli
