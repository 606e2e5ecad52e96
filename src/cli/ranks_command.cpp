// `candle-graph ranks DIR|FILE... [--step N|all] [-j N] [-o FILE] [--markdown FILE]
// [--html FILE]`: candle-graph/ranks/1, the ranks of one distributed run side by side
// (docs/ranks.md), also as the viewer's offline Ranks page. The same
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
#include "viewer/html_document.hpp"

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

// Two outputs on one file would leave only the last one written; `-` is stdout, where the JSON
// goes without -o.
void refuse_shared_outputs(const std::optional<std::filesystem::path>& output,
                           const std::optional<std::filesystem::path>& markdown,
                           const std::optional<std::filesystem::path>& html) {
  const std::optional<std::filesystem::path> outs[] = {output.value_or("-"), markdown, html};
  for (std::size_t i = 0; i < std::size(outs); ++i)
    for (std::size_t j = i + 1; j < std::size(outs); ++j)
      if (outs[i] && outs[j] && (*outs[i] == *outs[j] || output::same_file(*outs[i], *outs[j])))
        throw UsageError("-o, --markdown and --html must name different files");
}

void write_analysis(const ranks::RanksAnalysis& analysis,
                    const std::optional<std::filesystem::path>& output,
                    const std::optional<std::filesystem::path>& markdown,
                    const std::optional<std::filesystem::path>& html_path) {
  // The page embeds the very document -o writes (compact), so the page and the JSON cannot
  // disagree. Rendered before anything is written: a binary built without the front end fails
  // without leaving a partial set of outputs behind.
  std::string html;
  if (html_path) {
    output::JsonStream compact({}, output::JsonStyle::compact);
    ranks::write_ranks_json(compact, analysis);
    compact.finish();
    html = viewer::render_evidence_html(compact.take());
  }
  if (markdown) emit_output(markdown, ranks::ranks_markdown(analysis), {});
  if (html_path) emit_output(html_path, html, {});
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
    std::optional<std::filesystem::path> html;
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
      "Prints candle-graph/ranks/1 JSON (keys sorted). --html writes the same document as an\n"
      "offline page (the viewer's Ranks view: step heat map, per-rank time bars, tables).\n"
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
  CLI::Option* html = cmd->add_option("--html", args->html,
                                      "also write the offline HTML page of the same analysis here "
                                      "(the viewer's Ranks view)");
  CLI::Option* map =
      cmd->add_flag("--map", args->map,
                    "reduce the one trace INPUT to its candle-graph/rank-summary/1 (map stage)");
  // The step is chosen when each rank is mapped; the summary no longer has the other steps.
  cmd->add_flag("--reduce", args->reduce,
                "merge the rank summaries INPUT... into candle-graph/ranks/1 (reduce stage)")
      ->excludes(map)
      ->excludes(step)
      ->excludes(jobs);
  map->excludes(markdown)->excludes(html)->excludes(jobs);
  return [args] {
    if (args->map) return map_rank(args->inputs, args->step, args->output);
    refuse_shared_outputs(args->output, args->markdown, args->html);
    if (args->reduce) {
      refuse_overwrite(args->inputs, {args->output, args->markdown, args->html});
      write_analysis(ranks::analyze_ranks(read_summaries(args->inputs)), args->output,
                     args->markdown, args->html);
      return static_cast<int>(kExitOk);
    }
    ImportOptions options = import_options(args->step, "ranks");
    options.threads = 1;  // -j here reads that many ranks at once, each on one thread
    const std::vector<std::filesystem::path> files = ranks::expand_rank_inputs(args->inputs);
    refuse_overwrite(files, {args->output, args->markdown, args->html});  // before the reading
    write_analysis(ranks::analyze_ranks(ranks::read_rank_profiles(files, options, args->jobs)),
                   args->output, args->markdown, args->html);
    return static_cast<int>(kExitOk);
  };
}

}  // namespace candle_graph::cli
