// `candle-graph ranks DIR|FILE... [--step N|all] [-j N] [-o FILE] [--markdown FILE]
// [--html FILE]`: candle-graph/ranks/1, the ranks of one distributed run side by side
// (docs/ranks.md), also as the viewer's offline Ranks page. The same
// split for a cluster: `--map TRACE` writes one rank's candle-graph/rank-summary/1 (one job per
// rank), `--reduce SUMMARY...` merges them into the document the local run writes.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>
#include <thread>

#include "cli/analysis_support.hpp"
#include "cli/command.hpp"
#include "output/atomic_file.hpp"
#include "output/created_parents.hpp"
#include "output/output_group.hpp"
#include "ranks/rank_reading.hpp"
#include "ranks/rank_summary.hpp"
#include "ranks/ranks_output.hpp"
#include "viewer/html_document.hpp"
#include "viewer/viewer_page.hpp"

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

// Where the Ranks page links to a rank's page: relative to the page's own directory, so the two
// can move together.
std::optional<std::string> href_from(const std::optional<std::filesystem::path>& html_path,
                                     const std::filesystem::path& page) {
  if (!html_path || *html_path == "-") return std::nullopt;
  std::error_code ec;
  const auto from = std::filesystem::weakly_canonical(
      std::filesystem::absolute(*html_path, ec).parent_path(), ec);
  const auto to = std::filesystem::weakly_canonical(std::filesystem::absolute(page, ec), ec);
  if (ec) return std::nullopt;
  return to.lexically_relative(from).generic_string();
}

struct RankPageRequest {
  std::filesystem::path dir;
  std::set<std::uint64_t> only;                      // empty: every rank
  std::vector<std::filesystem::path> other_outputs;  // -o, --markdown, --html
};

// One viewer page per requested rank, the page `report TRACE --html` writes for that rank's file
// (the file the analysis kept for the rank). Each trace is read again, one at a time, so memory
// stays that of one trace. A rank whose page cannot be built (an untrusted trace) gets a health
// entry instead, and the others are still written.
std::vector<ranks::RankPage> write_rank_pages(ranks::RanksAnalysis& analysis,
                                              const RankPageRequest& request,
                                              const std::string& step,
                                              const std::vector<std::filesystem::path>& inputs,
                                              const std::optional<std::filesystem::path>& html,
                                              output::OutputGroup& outputs) {
  for (std::uint64_t r : request.only)
    if (std::none_of(analysis.ranks.begin(), analysis.ranks.end(),
                     [r](const ranks::RankProfile& p) { return p.rank == r; }))
      throw UsageError("--rank-pages-for names rank " + std::to_string(r) +
                       ", which no input trace is");
  std::vector<ranks::RankPage> pages;
  for (const ranks::RankProfile& p : analysis.ranks) {
    if (!request.only.empty() && !request.only.contains(p.rank)) continue;
    const std::filesystem::path page = request.dir / ("rank-" + std::to_string(p.rank) + ".html");
    refuse_overwrite(inputs, {page});
    for (const auto& out : request.other_outputs)
      if (out == page || output::same_file(out, page))
        throw UsageError("-o, --markdown and --html must not be a rank page (" + page.string() +
                         ")");
    std::string text;
    try {
      const TraceDocument doc = load_trace(p.file, step);
      text = viewer::render_viewer(build_evidence(doc, nullptr, std::nullopt));
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::io || e.kind() == ErrorKind::usage) throw;
      analysis.health.push_back(
          {"rank_page_not_written",
           "rank " + std::to_string(p.rank) + ": no page for " + p.file + ": " + e.what()});
      continue;
    }
    // Outside the try: a page that cannot be written (a full disk) ends the command, exit 1; it
    // is not a rank without a page.
    emit_output(page, text, {}, &outputs);
    std::fprintf(stderr, "wrote %s (rank %llu)\n", page.string().c_str(),
                 static_cast<unsigned long long>(p.rank));
    pages.push_back({p.rank, page.string(), href_from(html, page)});
  }
  return pages;
}

void write_analysis(const ranks::RanksAnalysis& analysis, const std::vector<ranks::RankPage>& pages,
                    const std::optional<std::filesystem::path>& output,
                    const std::optional<std::filesystem::path>& markdown,
                    const std::optional<std::filesystem::path>& html_path,
                    output::OutputGroup& outputs) {
  // The page embeds the very document -o writes (compact), so the page and the JSON cannot
  // disagree. Rendered before anything is written: a binary built without the front end fails
  // without leaving a partial set of outputs behind.
  std::string html;
  if (html_path) {
    output::JsonStream compact({}, output::JsonStyle::compact);
    ranks::write_ranks_json(compact, analysis, pages);
    compact.finish();
    html = viewer::render_evidence_html(compact.take());
  }
  if (markdown) emit_output(markdown, ranks::ranks_markdown(analysis, pages), {}, &outputs);
  if (html_path) emit_output(html_path, html, {}, &outputs);
  emit_json(
      output, {}, [&](output::JsonStream& w) { ranks::write_ranks_json(w, analysis, pages); },
      &outputs);
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
    std::optional<std::filesystem::path> rank_pages;
    std::vector<std::uint64_t> rank_pages_for;
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
      "region, time per collective. Across ranks: clocks aligned on the ends of matched\n"
      "collectives (one process group's sequence number where PyTorch recorded it, else the\n"
      "k-th call of a kernel name on each rank), arrival skew per collective,\n"
      "stragglers (times last, wait imposed on the others), per-step spread, and the step time\n"
      "if the straggler arrived like the median rank. Duplicate, missing or foreign ranks are\n"
      "`health` entries; the analysis goes on without them.\n"
      "Prints candle-graph/ranks/1 JSON (keys sorted). --html writes the same document as an\n"
      "offline page (the viewer's Ranks view: step heat map, per-rank time bars, tables);\n"
      "--rank-pages DIR adds each rank's own viewer (its timeline on demand, linked from it).\n"
      "Exit: 0 ok (health entries included), 1 an unreadable trace, one without a rank or an\n"
      "invalid summary (the file is named), 2 usage error.\n"
      "On a cluster, split it: --map TRACE reduces one rank's trace to a\n"
      "candle-graph/rank-summary/1 JSON (one task per rank), --reduce SUMMARY... merges the\n"
      "summaries (any order; of two of one rank the first given is kept, as a local run keeps\n"
      "the first file) into the same candle-graph/ranks/1 a local run writes.\n"
      "Examples: candle-graph ranks traces/ -j 4 --markdown ranks.md | jq .stragglers\n"
      "  candle-graph ranks traces/ --html ranks.html --rank-pages rank-pages --rank-pages-for 3\n"
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
  CLI::Option* pages = cmd->add_option(
      "--rank-pages", args->rank_pages,
      "also write each rank's own viewer page (timeline, operators, kernels: what `report "
      "--html` writes for its trace) into this directory as rank-N.html; the --html page links "
      "each rank to its page");
  CLI::Option* pages_for =
      cmd->add_option("--rank-pages-for", args->rank_pages_for,
                      "only these ranks' pages, e.g. 3,7 (default: every rank)")
          ->delimiter(',')
          ->needs(pages);
  CLI::Option* map =
      cmd->add_flag("--map", args->map,
                    "reduce the one trace INPUT to its candle-graph/rank-summary/1 (map stage)");
  // The step is chosen when each rank is mapped; the summary no longer has the other steps.
  cmd->add_flag("--reduce", args->reduce,
                "merge the rank summaries INPUT... into candle-graph/ranks/1 (reduce stage)")
      ->excludes(map)
      ->excludes(step)
      ->excludes(jobs);
  map->excludes(markdown)->excludes(html)->excludes(jobs)->excludes(pages)->excludes(pages_for);
  // A summary no longer holds the trace a page is drawn from.
  cmd->get_option("--reduce")->excludes(pages)->excludes(pages_for);
  return [args] {
    if (args->map) return map_rank(args->inputs, args->step, args->output);
    refuse_shared_outputs(args->output, args->markdown, args->html);
    if (args->reduce) {
      refuse_overwrite(args->inputs, {args->output, args->markdown, args->html});
      output::OutputGroup outputs;
      write_analysis(ranks::analyze_ranks(read_summaries(args->inputs)), {}, args->output,
                     args->markdown, args->html, outputs);
      outputs.commit();
      return static_cast<int>(kExitOk);
    }
    ImportOptions options = import_options(args->step, "ranks");
    options.threads = 1;  // -j here reads that many ranks at once, each on one thread
    const std::vector<std::filesystem::path> files = ranks::expand_rank_inputs(args->inputs);
    refuse_overwrite(files, {args->output, args->markdown, args->html});  // before the reading
    ranks::RanksAnalysis analysis =
        ranks::analyze_ranks(ranks::read_rank_profiles(files, options, args->jobs));
    // Every output lands at the end, together. The pages' directory, when this command creates
    // it, goes again if they do not (declared first: removed after the pages' temporary files).
    output::CreatedParents pages_dir;
    output::OutputGroup outputs;
    std::vector<ranks::RankPage> rank_pages;
    if (args->rank_pages) {
      RankPageRequest request{
          *args->rank_pages, {args->rank_pages_for.begin(), args->rank_pages_for.end()}, {}};
      for (const auto& out : {args->output, args->markdown, args->html})
        if (out) request.other_outputs.push_back(*out);
      pages_dir.create(request.dir, request.dir.string());
      rank_pages = write_rank_pages(analysis, request, args->step, files, args->html, outputs);
    }
    write_analysis(analysis, rank_pages, args->output, args->markdown, args->html, outputs);
    outputs.commit();
    pages_dir.keep();
    return static_cast<int>(kExitOk);
  };
}

}  // namespace candle_graph::cli
