// `candle-graph convert PYTORCH_TRACE[.gz] -o trace.jsonl [--step N]`
#include <iostream>
#include <memory>

#include "cli/analysis_support.hpp"
#include "cli/command.hpp"
#include "import/registry/convert.hpp"
#include "output/atomic_file.hpp"
#include "output/visible_text.hpp"

namespace candle_graph::cli {

Runner register_convert(CLI::App& app) {
  struct ConvertCliArgs {
    std::filesystem::path input;
    std::filesystem::path output;
    std::string step;
    bool quiet = false;
  };
  auto args = std::make_shared<ConvertCliArgs>();
  CLI::App* cmd = app.add_subcommand(
      "convert",
      "Turn a PyTorch profiler trace into a trace/6 trace that validates as trusted.\n"
      "Reads what torch.profiler's export_chrome_trace() wrote (Kineto JSON, any layout since\n"
      "2021, plain or .gz), the legacy autograd profiler's JSON array (PyTorch built without\n"
      "Kineto), or candle-graph's own `export --format chrome` output.\n"
      "  measured region: ProfilerStep#N (--step N; default the last complete step; --step all:\n"
      "                   every step), or the whole profiled window when the loop never called\n"
      "                   prof.step(); every step's wall and device busy time is kept in the meta\n"
      "  spans: user_annotation / record_function ranges; forward/backward/optimizer from their\n"
      "         names, Optimizer.step#..., and the autograd engine's evaluate_function ops\n"
      "  ops:   cpu_op events (shapes/dtypes from Input Dims/Input type) and runtime calls with\n"
      "         their thread, inclusive and exclusive time; kernels, memcpys, memsets and syncs "
      "on\n"
      "         cuda:N with their stream and correlation id, in the span that launched them\n"
      "  memory: [memory] instants (profile_memory=True) as alloc/free pairs by address\n"
      "Whatever breaks a trace/6 rule is repaired or dropped and counted: on stderr and in the\n"
      "meta tags (convert.*). Exit: 0 written, 1 unreadable or not a PyTorch trace, 2 usage.\n"
      "Example:\n"
      "  candle-graph convert run/trace.pt.trace.json.gz -o run/trace.jsonl --step 3\n"
      "  candle-graph view run/trace.jsonl -o run/viewer.html");
  cmd->add_option("PYTORCH_TRACE", args->input, "PyTorch profiler JSON (.json or .json.gz)")
      ->required();
  cmd->add_option("-o,--output", args->output, "trace/6 JSONL file to write (atomically)")
      ->required();
  add_step_option(cmd, args->step);
  add_threads_option(cmd);
  cmd->add_flag("-q,--quiet", args->quiet, "print nothing on success");
  return [args] {
    if (output::same_file(args->input, args->output)) {
      throw UsageError("the output " + args->output.string() +
                       " is the input; choose another path");
    }
    ImportOptions options = import_options(args->step, args->input.string());
    if (args->quiet) {
      options.progress = {};
      options.converting = {};
    }
    const import::ConvertResult r =
        import::convert_pytorch_trace(args->input, args->output, options);
    if (!args->quiet) {
      std::cerr << "converted " << args->input.string() << " (" << r.format << ", "
                << r.source_events << " events) -> " << args->output.string() << ": " << r.spans
                << " spans, " << r.ops << " ops (" << r.device_ops << " on GPUs), "
                << r.memory_events << " memory events";
      if (!r.measured.empty()) std::cerr << "; measured: " << output::visible_text(r.measured);
      std::cerr << "\n";
      for (const auto& [what, count] : r.repairs) {
        std::cerr << "  " << output::visible_text(what) << ": " << count << "\n";
      }
    }
    return kExitOk;
  };
}

}  // namespace candle_graph::cli
