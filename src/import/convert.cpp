// The pipeline: scan (event_scanner) -> decode into the compact model (event_decoder) -> pick the
// flavour -> assemble and stream the trace/6 output (kineto_assembly / candle_chrome_mapping).
#include "import/convert.hpp"

#include "candle_graph/error.hpp"
#include "import/pytorch/assembly.hpp"
#include "import/trace_event/event_decoder.hpp"
#include "import/trace_event/event_scanner.hpp"
#include "output/atomic_file.hpp"

namespace candle_graph::import {

ConvertResult convert_pytorch_trace(const std::filesystem::path& input,
                                    const std::filesystem::path& output,
                                    const ConvertOptions& options) {
  const std::string path = input.string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(input, ec)) {
    throw Error(path, 0,
                std::filesystem::exists(input, ec) ? "not a regular file" : "no such file");
  }
  if (output::same_file(input, output)) {
    throw Error(path, 0, "the output path names the input file; refusing to overwrite it");
  }
  trace_event::Model model;
  trace_event::EventDecoder decoder(path, model);
  const trace_event::EventScanner::Result scan =
      trace_event::EventScanner::scan(input, decoder, options.progress, options.progress_user);
  decoder.finish();
  if (model.events == 0) throw Error(path, 0, "not a PyTorch profiler trace: it holds no events");

  SourceInfo src;
  src.file_name = input.filename().string();
  src.gzip = scan.gzip;
  src.bytes = scan.bytes;
  src.missing_array_end = scan.missing_array_end;
  src.skipped_top_level = scan.skipped_top_level;
  TraceOutput out(output);
  ConvertResult result;
  if (scan.layout == trace_event::EventScanner::Layout::kineto_object && pytorch::is_candle_chrome(model)) {
    src.format = "candle-graph-chrome";
    result = pytorch::assemble_candle_chrome(model, src, path, out);
  } else {
    src.format =
        scan.layout == trace_event::EventScanner::Layout::bare_array ? "legacy-autograd-profiler" : "kineto";
    result = pytorch::assemble_pytorch(model, options, src, path, out);
  }
  out.commit();
  return result;
}

}  // namespace candle_graph::import
