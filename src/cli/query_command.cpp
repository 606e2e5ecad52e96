// `candle-graph query TRACE --kind KIND [--limit N] [-o FILE]`: one trace-query/1 slice (trace6.md
// §11).
#include <cmath>
#include <memory>

#include "cli/analysis_support.hpp"
#include "cli/command.hpp"
#include "evidence/evidence_json.hpp"

namespace candle_graph::cli {

Runner register_query(CLI::App& app) {
  struct Args {
    std::filesystem::path trace;
    std::string kind;
    std::size_t limit = 50;
    std::optional<std::filesystem::path> output;
    std::string step;
    double kernel_wait_us = 30, runtime_cutoff_us = 50, delay_cutoff_us = 100;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "query",
      "Answer one question about a trusted trace as {gaps, health, result} JSON\n"
      "(result schema candle-graph/trace-query/1, keys sorted):\n"
      "  slowest     measured total, 8 slowest spans, slowest ops by self time\n"
      "  heaviest    memory peak, 8 heaviest spans, ops with the most output bytes\n"
      "  memory      memory summary, timeline, what was live at the peak, per device\n"
      "  efficiency  ops by output bytes per nanosecond of self time\n"
      "  spans       every graph node and edge (unbounded)\n"
      "  tensors     tensor checkpoints      gradients  gradient facts\n"
      "  ops         per op name: calls, host self/total, device self/total (key_averages),\n"
      "              and the device time no op launched\n"
      "  kernels     device work per name and device: calls, total, mean, min, max\n"
      "  steps       the profiler steps of a PyTorch trace: wall and device busy time each,\n"
      "              their median, min, max and spread, and whether the measured one is typical\n"
      "  gpu         per device: window, busy/idle, compute/communication/memory time, the\n"
      "              kernel-type overlap table, per stream idle time by cause (host wait, kernel\n"
      "              wait, other), comm/compute overlap, launch delays, host sync stalls\n"
      "Exit: 0 ok, 1 unreadable or untrusted trace, 2 usage error.\n"
      "Example: candle-graph query run/trace.jsonl --kind slowest --limit 10");
  cmd->add_option("TRACE", args->trace, kTraceInputHelp)->required();
  cmd->add_option("--kind", args->kind, "what to ask")
      ->required()
      ->check(CLI::IsMember({"slowest", "heaviest", "memory", "efficiency", "spans", "tensors",
                             "gradients", "ops", "kernels", "steps", "gpu"}));
  cmd->add_option("--limit", args->limit,
                  "at most N items in slowest/heaviest/efficiency/ops/kernels")
      ->default_val(50)
      // A bounded range, not CLI::PositiveNumber: that one's error quotes DBL_MAX in 300 digits.
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000000}));
  cmd->add_option("-o,--output", args->output, "write the JSON here instead of stdout");
  add_step_option(cmd, args->step);
  add_threads_option(cmd);
  auto threshold = [&](const char* name, double& value, const char* help) {
    cmd->add_option(name, value, help)->capture_default_str()->check(CLI::Range(0.0, 1e9));
  };
  threshold("--kernel-wait-us", args->kernel_wait_us,
            "gpu: an idle gap on a stream shorter than this is a kernel wait (µs)");
  threshold("--runtime-cutoff-us", args->runtime_cutoff_us,
            "gpu: launch calls longer than this are runtime outliers (µs)");
  threshold("--delay-cutoff-us", args->delay_cutoff_us,
            "gpu: launch delays longer than this are outliers (µs)");
  return [args] {
    const evidence::QueryKind kind = *evidence::parse_query_kind(args->kind);
    const TraceDocument doc = load_trace(args->trace, args->step);
    const bool edges = kind == evidence::QueryKind::spans;  // only `spans` shows edges
    evidence::EvidencePacket packet =
        analyse_trace(doc, args->trace, nullptr, nsight_dir_for(args->trace, std::nullopt),
                      GraphOptions{.edges = edges});
    auto ns = [](double us) { return static_cast<std::uint64_t>(std::llround(us * 1000.0)); };
    const device::GpuOptions gpu{ns(args->kernel_wait_us), ns(args->runtime_cutoff_us),
                                 ns(args->delay_cutoff_us)};
    const device::GpuOptions defaults;
    // The packet holds the analysis with the default thresholds: redo it only for others.
    if (kind == evidence::QueryKind::gpu && (gpu.kernel_wait_ns != defaults.kernel_wait_ns ||
                                             gpu.runtime_cutoff_ns != defaults.runtime_cutoff_ns ||
                                             gpu.delay_cutoff_ns != defaults.delay_cutoff_ns))
      packet.gpu_trace = device::analyze_gpu(doc, gpu);
    emit_json(args->output, {args->trace}, [&](output::JsonStream& w) {
      evidence::write_query_document(w, packet, kind, args->limit);
    });
    return kExitOk;
  };
}

}  // namespace candle_graph::cli
