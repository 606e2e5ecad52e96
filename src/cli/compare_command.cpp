// `candle-graph compare BASELINE CANDIDATE [-o FILE]`: comparison/1 (trace6.md §9.4). No graph is
// built, so untrusted traces compare too (then `comparable` is false). `candle-graph compare
// --baseline B1 … Bn --candidate C1 … Cm [...]`: the cohort comparison comparison/2
// (src/compare/cohort_comparison.hpp); each run is read once and reduced, trace files several
// at a time (one thread each, `-j` at once, so at most that many documents are in memory), and
// the reduced runs are added in the order given.
#include <algorithm>
#include <deque>
#include <future>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "candle_graph/import.hpp"
#include "cli/analysis_support.hpp"
#include "cli/command.hpp"
#include "compare/cohort_comparison.hpp"
#include "compare/cohort_json.hpp"
#include "compare/comparison_parts.hpp"
#include "evidence/evidence_json.hpp"
#include "output/atomic_file.hpp"
#include "trace/profiler_steps.hpp"

namespace candle_graph::cli {
namespace {

struct CompareArgs {
  std::filesystem::path baseline;
  std::filesystem::path candidate;
  std::optional<std::filesystem::path> output;
  std::vector<std::filesystem::path> baseline_runs;
  std::vector<std::filesystem::path> candidate_runs;
  double threshold = 0;
  bool require_eligible = false;
  std::uint64_t resamples = 10'000;
  std::uint64_t seed = 1;
  std::string step;
  bool steps_as_runs = false;
};

// Reads one cohort input into the builder. A directory is taken as an evidence bundle: when it
// cannot be loaded (and so verified) it becomes an `unverified_inputs` reason instead of ending
// the comparison; a trace file that cannot be read is an error (exit 1), as everywhere.
void read_cohort_input(compare::CohortBuilder& builder, compare::Side side,
                       const std::filesystem::path& path, std::string_view step) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    try {
      const TraceDocument doc = load_trace(path, step);
      builder.add_run(side, doc, path.string());
    } catch (const Error& e) {
      builder.add_unverified(side, path.string(), e.what());
    }
    return;
  }
  const TraceDocument doc = load_trace(path, step);
  builder.add_run(side, doc, path.string());
}

// The cohort's inputs in order (baseline, then candidate), each read into the builder. Trace
// files are read and reduced `threads` at a time, each on one thread, and added to the builder
// in the order given: it numbers span and parameter names as runs arrive, so the order, and with
// it the comparison, is that of reading them one after another. A directory (a bundle,
// verified once per process) is read when its turn comes, on this thread. The first input that
// fails, in the order given, is the error raised.
void read_cohort(compare::CohortBuilder& builder,
                 const std::vector<std::pair<compare::Side, std::filesystem::path>>& inputs,
                 std::string_view step) {
  const unsigned threads = read_threads();
  // Per input in order: its reduction running on a thread, or none when it is read here.
  std::deque<std::optional<std::future<compare::ReducedRun>>> ahead;
  std::size_t next = 0;
  auto launch = [&] {
    const std::filesystem::path& path = inputs[next++].second;
    std::error_code ec;
    if (threads <= 1 || std::filesystem::is_directory(path, ec)) {
      ahead.emplace_back();
      return;
    }
    ImportOptions options = import_options(step, path.string());
    options.threads = 1;
    // Several files at once: one progress line each would interleave.
    options.progress = {};
    options.converting = {};
    ahead.emplace_back(std::async(std::launch::async, [path, options] {
      return compare::reduce_run(import_trace(path, options).document, path.string());
    }));
  };
  for (const auto& [side, path] : inputs) {
    while (next < inputs.size() && ahead.size() < std::max(1u, threads)) launch();
    std::optional<std::future<compare::ReducedRun>> reduced = std::move(ahead.front());
    ahead.pop_front();
    if (reduced)
      builder.add_reduced(side, reduced->get());
    else
      read_cohort_input(builder, side, path, step);
  }
}

// Every profiler step of one PyTorch trace as a run of its side (`compare A B --steps-as-runs`):
// the trace is imported once per step, each step reduced before the next is read. A last step
// that the profiler's stop cut short is no run: it lasted as long as the profiler ran on.
void read_steps_as_runs(compare::CohortBuilder& builder, compare::Side side,
                        const std::filesystem::path& path) {
  const TraceDocument first = load_trace(path);
  if (first.run().profiler_steps.empty())
    throw UsageError(path.string() +
                     ": --steps-as-runs needs a PyTorch trace with ProfilerStep#N events");
  const std::optional<std::uint64_t> cut_short = cut_short_step(first.run());
  for (const ProfilerStepRecord& s : first.run().profiler_steps) {
    if (s.step == cut_short) continue;
    const TraceDocument doc = load_trace(path, std::to_string(s.step));
    builder.add_run(side, doc, path.string() + " ProfilerStep#" + std::to_string(s.step));
  }
}

// Runs of a cohort are read one after another (`-j` at a time) into arrays of the same few
// sizes. The command line maps every block from 1 MiB up afresh (src/cli/main.cpp), so each run
// faulted in its arrays again, zeroed: half of a 2 x 10 comparison's page faults. Blocks up to
// 8 MiB now come from the heap, and a run's arrays reuse the pages the run before freed (0.91x the
// time, half the faults, peak RSS + 8 MiB; larger blocks, up to glibc's 32 MiB, kept more memory
// for no further gain).
void reuse_memory_between_runs() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 8 << 20);
#endif
}

int run_cohort_compare(const CompareArgs& a) {
  if (a.steps_as_runs) {
    if (a.baseline.empty() || a.candidate.empty() || !a.baseline_runs.empty() ||
        !a.candidate_runs.empty())
      throw UsageError("--steps-as-runs compares the steps of BASELINE with those of CANDIDATE");
    if (!a.step.empty()) throw UsageError("--steps-as-runs uses every step; --step picks one");
  } else {
    if (a.baseline_runs.empty() || a.candidate_runs.empty())
      throw UsageError("the cohort form needs both --baseline and --candidate runs");
    if (!a.baseline.empty() || !a.candidate.empty())
      throw UsageError("give either BASELINE CANDIDATE or --baseline … --candidate …, not both");
  }
  const std::vector<std::filesystem::path> pair = {a.baseline, a.candidate};
  if (a.output && !a.output->empty() && *a.output != "-")
    for (const auto* list : {&a.baseline_runs, &a.candidate_runs, &pair})
      for (const auto& in : *list)
        if (!in.empty() && output::same_file(in, *a.output))
          throw UsageError("refusing to write output over the input file " + in.string());
  reuse_memory_between_runs();
  compare::CohortBuilder builder;
  if (a.steps_as_runs) {
    read_steps_as_runs(builder, compare::Side::baseline, a.baseline);
    read_steps_as_runs(builder, compare::Side::candidate, a.candidate);
  }
  std::vector<std::pair<compare::Side, std::filesystem::path>> inputs;
  for (const auto& p : a.baseline_runs) inputs.emplace_back(compare::Side::baseline, p);
  for (const auto& p : a.candidate_runs) inputs.emplace_back(compare::Side::candidate, p);
  read_cohort(builder, inputs, a.step);
  compare::CohortOptions options;
  options.threshold_percent = a.threshold;
  options.bootstrap.resamples = a.resamples;
  options.bootstrap.seed = a.seed;
  options.steps_as_runs = a.steps_as_runs;
  const compare::CohortComparison c = std::move(builder).compare(options);
  emit_json(a.output, {}, [&](output::JsonStream& w) { compare::write_cohort_comparison(w, c); });
  return a.require_eligible && !c.eligible ? kExitUntrusted : kExitOk;
}

}  // namespace

Runner register_compare(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Compare a candidate trace with a baseline as candle-graph/comparison/1 JSON: whether the\n"
      "runs are comparable (entrypoint, phase, device, timing, warmup, workload tags), measured\n"
      "total and memory-peak deltas, the 50 span groups that changed most, gradient changes.\n"
      "With --baseline and --candidate, compare two cohorts of runs (traces or bundle\n"
      "directories) as candle-graph/comparison/2: an eligibility verdict with reason codes\n"
      "(insufficient_runs below 5 runs a side, duplicate_run_id, identity_conditions_differ,\n"
      "untrusted_input, unverified_inputs), the 95 % bootstrap interval of the ratio of mean\n"
      "measured totals minus 1 (paired over pairs when every run has a `pair_id` tag), the\n"
      "verdict faster/slower/inconclusive (only when the whole interval lies beyond\n"
      "--threshold), peak memory, the 50 span keys that changed most, gradient-state changes.\n"
      "A PyTorch profiler trace's entrypoint is its file's name: not compared, and its spans\n"
      "are keyed from its step (`ProfilerStep/...`), so two runs or two steps meet span by span;\n"
      "where two such traces name their GPUs' models (deviceProperties), the models are compared,\n"
      "not the GPU indices, so two ranks of one job compare.\n"
      "Exit: 0 ok (even when not comparable), 1 unreadable trace, 2 usage error, 3 not eligible\n"
      "with --require-eligible.\n"
      "Example: candle-graph compare main/trace.jsonl branch/trace.jsonl -o diff.json\n"
      "Example: candle-graph compare --baseline main/run*.jsonl --candidate branch/run*.jsonl \\\n"
      "           --threshold 2 --require-eligible -o cohorts.json");
  cmd->add_option("BASELINE", args->baseline, "the reference run (any trace format, or a bundle)");
  cmd->add_option("CANDIDATE", args->candidate, "the changed run");
  add_step_option(cmd, args->step);
  add_threads_option(cmd);
  cmd->add_flag("--steps-as-runs", args->steps_as_runs,
                "BASELINE CANDIDATE form with PyTorch traces: every ProfilerStep#N of each trace "
                "is one run of its cohort (comparison/2 with its interval), except a last "
                "step the profiler's stop cut short");
  cmd->add_option("-o,--output", args->output, "write the JSON here instead of stdout");
  CLI::Option* b =
      cmd->add_option("--baseline", args->baseline_runs, "cohort form: the baseline runs")
          ->expected(1, -1);
  CLI::Option* c =
      cmd->add_option("--candidate", args->candidate_runs, "cohort form: the candidate runs")
          ->expected(1, -1);
  b->needs(c);
  c->needs(b);
  CLI::Option* t = cmd->add_option("--threshold", args->threshold,
                                   "cohort form: faster/slower only beyond this many percent")
                       ->default_val(0.0)
                       ->check(CLI::Range(0.0, 1e6));
  CLI::Option* r = cmd->add_flag("--require-eligible", args->require_eligible,
                                 "cohort form: exit 3 when the cohorts are not eligible");
  CLI::Option* n =
      cmd->add_option("--resamples", args->resamples, "cohort form: bootstrap resamples")
          ->default_val(10'000)
          ->check(CLI::Range(std::uint64_t{1'000}, std::uint64_t{1'000'000}));
  CLI::Option* s =
      cmd->add_option("--seed", args->seed, "cohort form: bootstrap seed (same seed, same JSON)")
          ->default_val(1);
  for (CLI::Option* o : {t, r, n, s}) o->needs(b);
  return [args] {
    if (!args->baseline_runs.empty() || !args->candidate_runs.empty() || args->steps_as_runs)
      return run_cohort_compare(*args);
    if (args->baseline.empty() || args->candidate.empty())
      throw UsageError("compare needs BASELINE CANDIDATE, or --baseline … --candidate …");
    const TraceDocument baseline = load_trace(args->baseline, args->step);
    evidence::check_span_keys_fit(baseline, args->baseline.string());
    const TraceDocument candidate = load_trace(args->candidate, args->step);
    evidence::check_span_keys_fit(candidate, args->candidate.string());
    const Comparison cmp = compare_documents(baseline, candidate);
    emit_json(args->output, {args->baseline, args->candidate}, [&](output::JsonStream& w) {
      evidence::write_comparison(w, cmp, output::KeyOrder::declaration);
    });
    return static_cast<int>(kExitOk);
  };
}

}  // namespace candle_graph::cli
