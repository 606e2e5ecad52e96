// `export TRACE --format chrome -o OUT.json[.gz]`: one trusted trace as Chrome Trace Event JSON
// (export/chrome_trace_writer.hpp), gzip when OUT ends in `.gz`, written atomically.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "candle_graph/error.hpp"
#include "candle_graph/health.hpp"
#include "cli/analysis_support.hpp"
#include "cli/command.hpp"
#include "cli/standard_output.hpp"
#include "export/chrome_trace_writer.hpp"
#include "export/gzip_sink.hpp"
#include "export/pipelined_sink.hpp"
#include "output/atomic_file.hpp"

namespace candle_graph::cli {

int run_export_chrome(const ExportArgs& args) {
  if (args.traces.size() != 1)
    throw UsageError("export --format chrome takes exactly one trace (got " +
                     std::to_string(args.traces.size()) +
                     "); use --format sqlite to put several runs in one file");
  if (args.append) throw UsageError("--append is only for --format sqlite");
  if (args.nsight_dir) throw UsageError("--nsight-dir is not used by --format chrome");
  const std::filesystem::path& trace = args.traces.front();
  if (output::same_file(trace, args.output))
    throw UsageError("refusing to write output over the input file " + trace.string());

  const TraceDocument doc = load_trace(trace, args.step);
  const TraceHealth health = analyze_health(doc, read_threads());
  if (!health.trusted)
    throw Error(ErrorKind::untrusted, trace.string(), 0,
                "trace is structurally untrusted: " + health.error_summary());

  const bool to_stdout = args.output == "-";
  const bool gzip = !to_stdout && args.output.extension() == ".gz";
  std::optional<output::AtomicFile> file;
  if (!to_stdout) file.emplace(args.output);
  std::function<void(std::string_view)> out = [&](std::string_view piece) {
    if (file)
      file->write(piece);
    else
      write_stdout(piece);
  };
  std::unique_ptr<exporting::GzipSink> zip;
  if (gzip) zip = std::make_unique<exporting::GzipSink>(out);
  // Compression and the writes run on a second thread while the next pieces are formatted.
  exporting::PipelinedSink pipeline([&](std::string_view piece) {
    if (zip)
      zip->write(piece);
    else
      out(piece);
  });
  const exporting::ChromeExportStats stats = exporting::write_chrome_trace(
      doc, [&](std::string_view piece) { pipeline.write(piece); }, read_threads(),
      [&](std::string& text) { pipeline.hand_over(text); },
      write_progress_on_stderr(
          "writing " + (to_stdout ? std::string("<stdout>") : args.output.string()),
          trace_bytes(trace)));
  pipeline.finish();
  if (zip) zip->finish();
  if (file)
    file->commit();
  else
    flush_stdout();
  std::fprintf(stderr,
               "%s: %llu spans and %llu ops on %u track(s) (%llu moved to an overlap track, %llu "
               "clamped into their parent), %llu edge and %llu data flows, %llu counter samples\n",
               to_stdout ? "<stdout>" : args.output.string().c_str(),
               static_cast<unsigned long long>(stats.spans),
               static_cast<unsigned long long>(stats.ops), stats.tracks,
               static_cast<unsigned long long>(stats.overflowed),
               static_cast<unsigned long long>(stats.clamped),
               static_cast<unsigned long long>(stats.edge_flows),
               static_cast<unsigned long long>(stats.data_flows),
               static_cast<unsigned long long>(stats.counter_samples));
  if (stats.device_slices > 0)
    std::fprintf(stderr,
                 "%llu device slices (%llu moved to an overlap track of their stream), %llu "
                 "launch flows\n",
                 static_cast<unsigned long long>(stats.device_slices),
                 static_cast<unsigned long long>(stats.device_overflowed),
                 static_cast<unsigned long long>(stats.launch_flows));
  return kExitOk;
}

}  // namespace candle_graph::cli
