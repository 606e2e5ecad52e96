// `export TRACE... --format sqlite -o runs.db [--append] [--nsight-dir DIR]`: every trace and its
// analysis as one run of a candle-graph/sql/1 database (src/export/sqlite_*).
#include <cstdio>
#include <filesystem>

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
  std::uint64_t ops = 0;
  for (const auto& trace : args.traces) {
    const TraceDocument doc = load_trace(trace, args.step);
    try {
      db.add_run(doc, trace.string(),
                 [&] { return build_evidence(doc, nullptr, args.nsight_dir); });
    } catch (const Error& e) {
      if (e.path().empty()) throw Error(trace.string(), 0, e.message());
      throw;
    }
    ops += doc.ops().size();
  }
  db.commit();
  std::fprintf(stderr, "wrote %s: %zu run%s, %llu ops\n", args.output.string().c_str(),
               args.traces.size(), args.traces.size() == 1 ? "" : "s",
               static_cast<unsigned long long>(ops));
  return kExitOk;
}

}  // namespace candle_graph::cli
