// `candle-graph ranks DIR|FILE... [--step N|all] [-j N] [-o FILE] [--markdown FILE]`:
// candle-graph/ranks/1, the ranks of one distributed run side by side (docs/ranks.md). The same
// split for a cluster: `--map TRACE` writes one rank's candle-graph/rank-summary/1 (one job per
// rank), `--reduce SUMMARY...` merges them into the document the local run writes.
#include <memory>
#include <thread>

#include "cli/analysis_support.hpp"
#include "cli/command.hpp"
#include "output/atomic_file.hpp"
#include "ranks/rank_reading.hpp"
#include "ranks/rank_summary.hpp"
#include "ranks/ranks_output.hpp"

namespace candle_graph::cli {
namespace {

void refuse_overwrite(const std::vector<std::filesystem::path>& inputs,
                      std::initializer_list<std::optional<std::filesystem::path>> outputs) {
  for (const auto& f : inputs)
    for (const auto& out : outputs)
      if (out && output::same_file(f, *out))
        throw UsageError("refusing to write output over the input file " + f.string());
}

// The map stage: one trace, reduced as a local run reduces it, its profile written out.
int map_rank(const std::vector<std::filesystem::path>& inputs, const std::string& step,
             const std::optional<std::filesystem::path>& output) {
  if (inputs.size() != 1 || std::filesystem::is_directory(inputs.front()))
    throw UsageError("--map takes one trace file (one rank); run it once per rank");
  const ImportOptions options = import_options(step, "ranks");
  refuse_overwrite(inputs, {output});
  const ranks::RankProfile profile = ranks::read_rank_profiles(inputs, options, 1).front();
  emit_json(output, {}, [&](output::JsonStream& w) { ranks::write_rank_summary(w, profile); });
  return static_cast<int>(kExitOk);
}

// The reduce stage: the summaries in any order, since the merge sorts the ranks itself (of two
// summaries of one rank the first given is kept, as a local run keeps the first file).
std::vector<ranks::RankProfile> read_summaries(const std::vector<std::filesystem::path>& inputs) {
  std::vector<ranks::RankProfile> profiles;
  profiles.reserve(inputs.size());
  for (const auto& f : inputs) {
    if (!std::filesystem::exists(f))
      throw Error(ErrorKind::io, f.string(), 0, "no such file or directory");
    profiles.push_back(ranks::read_rank_summary(f));
  }
  return profiles;
}

void write_analysis(const ranks::RanksAnalysis& analysis,
                    const std::optional<std::filesystem::path>& output,
                    const std::optional<std::filesystem::path>& markdown) {
  if (markdown) emit_output(markdown, ranks::ranks_markdown(analysis), {});
  emit_json(output, {}, [&](output::JsonStream& w) { ranks::write_ranks_json(w, analysis); });
}

}  // namespace

Runner register_ranks(CLI::App& app) {
  struct Args {
    std::vector<std::filesystem::path> inputs;
    std::string step;
    unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
    std::optional<std::filesystem::path> output;
    std::optional<std::filesystem::path> markdown;
    bool map = false;
    bool reduce = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "ranks",
      "Compare the ranks of one distributed run: one trace per rank (Kineto plain or .gz, or\n"
      "trace/6; a directory means its *.json, *.json.gz and *.jsonl). The rank is Kineto's\n"
      "distributedInfo.rank, else the file name (rank-N, rank_N, workerN). Per rank: step wall\n"
      "times, GPU busy/compute/communication/idle and exposed communication of the measured\n"
      "region, time per collective kernel. Across ranks: clocks aligned on the ends of matched\n"
      "collectives (the k-th call of a kernel name on each rank), arrival skew per collective,\n"
      "stragglers (times last, wait imposed on the others), per-step spread, and the step time\n"
      "if the straggler arrived like the median rank. Duplicate, missing or foreign ranks are\n"
      "`health` entries; the analysis goes on without them.\n"
      "Prints candle-graph/ranks/1 JSON (keys sorted).\n"
      "Exit: 0 ok (health entries included), 1 an unreadable trace, one without a rank or an\n"
      "invalid summary (the file is named), 2 usage error.\n"
      "On a cluster, split it: --map TRACE reduces one rank's trace to a\n"
      "candle-graph/rank-summary/1 JSON (one task per rank), --reduce SUMMARY... merges the\n"
      "summaries (any order) into the same candle-graph/ranks/1 a local run writes.\n"
      "Examples: candle-graph ranks traces/ -j 4 --markdown ranks.md | jq .stragglers\n"
      "  candle-graph ranks --map traces/rank-3.json -o summaries/rank-3.summary.json\n"
      "  candle-graph ranks --reduce summaries/*.summary.json -o ranks.json");
  cmd->add_option("INPUT", args->inputs,
                  "rank traces, or directories of them; with --reduce, rank summaries")
      ->required();
  add_step_option(cmd, args->step);
  CLI::Option* step = cmd->get_option("--step");
  CLI::Option* jobs =
      cmd->add_option("-j,--jobs", args->jobs, "read this many traces at once (default: cores)")
          ->check(CLI::Range(1u, 1024u));
  cmd->add_option("-o,--output", args->output, "write the JSON here instead of stdout");
  CLI::Option* markdown =
      cmd->add_option("--markdown", args->markdown, "also write a short Markdown report here");
  CLI::Option* map =
      cmd->add_flag("--map", args->map,
                    "reduce the one trace INPUT to its candle-graph/rank-summary/1 (map stage)");
  // The step is chosen when each rank is mapped; the summary no longer has the other steps.
  cmd->add_flag("--reduce", args->reduce,
                "merge the rank summaries INPUT... into candle-graph/ranks/1 (reduce stage)")
      ->excludes(map)
      ->excludes(step)
      ->excludes(jobs);
  map->excludes(markdown)->excludes(jobs);
  return [args] {
    if (args->map) return map_rank(args->inputs, args->step, args->output);
    if (args->reduce) {
      refuse_overwrite(args->inputs, {args->output, args->markdown});
      write_analysis(ranks::analyze_ranks(read_summaries(args->inputs)), args->output,
                     args->markdown);
      return static_cast<int>(kExitOk);
    }
    const ImportOptions options = import_options(args->step, "ranks");
    const std::vector<std::filesystem::path> files = ranks::expand_rank_inputs(args->inputs);
    refuse_overwrite(files, {args->output, args->markdown});  // before the long reading
    write_analysis(ranks::analyze_ranks(ranks::read_rank_profiles(files, options, args->jobs)),
                   args->output, args->markdown);
    return static_cast<int>(kExitOk);
  };
}

}  // namespace candle_graph::cli
