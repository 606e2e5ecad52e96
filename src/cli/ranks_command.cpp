// `candle-graph ranks DIR|FILE... [--step N|all] [-j N] [-o FILE] [--markdown FILE]
// [--html FILE]`: candle-graph/ranks/1, the ranks of one distributed run side by side
// (docs/ranks.md).
#include <memory>
#include <thread>

#include "cli/analysis_support.hpp"
#include "cli/command.hpp"
#include "output/atomic_file.hpp"
#include "ranks/rank_reading.hpp"
#include "ranks/ranks_output.hpp"
#include "viewer/html_document.hpp"

namespace candle_graph::cli {

Runner register_ranks(CLI::App& app) {
  struct Args {
    std::vector<std::filesystem::path> inputs;
    std::string step;
    unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
    std::optional<std::filesystem::path> output;
    std::optional<std::filesystem::path> markdown;
    std::optional<std::filesystem::path> html;
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
      "Exit: 0 ok (health entries included), 1 an unreadable trace or one without a rank,\n"
      "2 usage error.\n"
      "Example: candle-graph ranks traces/ -j 4 --markdown ranks.md | jq .stragglers");
  cmd->add_option("INPUT", args->inputs, "rank traces, or directories of them")->required();
  add_step_option(cmd, args->step);
  cmd->add_option("-j,--jobs", args->jobs, "read this many traces at once (default: cores)")
      ->check(CLI::Range(1u, 1024u));
  cmd->add_option("-o,--output", args->output, "write the JSON here instead of stdout");
  cmd->add_option("--markdown", args->markdown, "also write a short Markdown report here");
  cmd->add_option("--html", args->html,
                  "also write the offline HTML page of the same analysis here (the viewer's "
                  "Ranks view)");
  return [args] {
    const ImportOptions options = import_options(args->step, "ranks");
    // Two outputs on one file would leave only the last one written; `-` is stdout, where the
    // JSON goes without -o.
    const std::optional<std::filesystem::path> outs[] = {args->output.value_or("-"), args->markdown,
                                                         args->html};
    for (std::size_t i = 0; i < std::size(outs); ++i)
      for (std::size_t j = i + 1; j < std::size(outs); ++j)
        if (outs[i] && outs[j] && (*outs[i] == *outs[j] || output::same_file(*outs[i], *outs[j])))
          throw UsageError("-o, --markdown and --html must name different files");
    const std::vector<std::filesystem::path> files = ranks::expand_rank_inputs(args->inputs);
    for (const auto& f : files)  // before the reading, which is the long part
      for (const auto& out : {args->output, args->markdown, args->html})
        if (out && output::same_file(f, *out))
          throw UsageError("refusing to write output over the input file " + f.string());
    const ranks::RanksAnalysis analysis =
        ranks::analyze_ranks(ranks::read_rank_profiles(files, options, args->jobs));
    // The page embeds the very document -o writes (compact), so the page and the JSON cannot
    // disagree. Rendered before anything is written: a binary built without the front end fails
    // without leaving a partial set of outputs behind.
    std::string html;
    if (args->html) {
      output::JsonStream compact({}, output::JsonStyle::compact);
      ranks::write_ranks_json(compact, analysis);
      compact.finish();
      html = viewer::render_evidence_html(compact.take());
    }
    if (args->markdown) emit_output(args->markdown, ranks::ranks_markdown(analysis), {});
    if (args->html) emit_output(args->html, html, {});
    emit_json(args->output, {},
              [&](output::JsonStream& w) { ranks::write_ranks_json(w, analysis); });
    return static_cast<int>(kExitOk);
  };
}

}  // namespace candle_graph::cli
