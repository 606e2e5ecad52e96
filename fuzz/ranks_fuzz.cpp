// libFuzzer target for `ranks` (src/ranks): the ranks of one run, each generated from its share
// of the bytes (generated_trace.hpp: spans, host ops, runtime calls and device work, NCCL
// kernels among them) and written as rank-N.jsonl, then
//   - read with one thread and with two (`ranks -j 2`): the same candle-graph/ranks/1 text, or
//     the same error;
//   - every rank's profile written as a candle-graph/rank-summary/1 and read back, then reduced
//     (`ranks --map` on each, `ranks --reduce` of them all): the same text as the local run,
//     which is what the cluster split promises; in the reverse order too when every file states
//     another rank (of two files of one rank, the first given is kept);
//   - the text is valid JSON, and what must add up does (check_laws);
//   - the Markdown (`ranks --markdown`) keeps its own structure whatever the names
//     (report_structure.hpp).
// Input: a control byte (2-4 ranks; bit 2: one rank's file given twice, a duplicate the health
// names) and the bytes, cut into as many equal shares as there are ranks.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "candle_graph/error.hpp"
#include "fuzz_support.hpp"
#include "generated_trace.hpp"
#include "json_check.hpp"
#include "output/json_stream.hpp"
#include "ranks/rank_analysis.hpp"
#include "ranks/rank_reading.hpp"
#include "ranks/rank_summary.hpp"
#include "ranks/ranks_output.hpp"
#include "report_structure.hpp"

namespace {

using namespace candle_graph;
using candle_graph::fuzz::fail;
using candle_graph::fuzz::law;

// What must add up in an analysis of ranks: each rank's classes of device work within its busy
// time and the exposed communication within the communication; a collective's mean skew within
// its largest; no more "last to arrive" than matched calls.
void check_laws(const ranks::RanksAnalysis& a) {
  for (const ranks::RankProfile& p : a.ranks) {
    law(p.compute_ns <= p.busy_ns, "a rank's compute exceeds its busy time", p.compute_ns,
        p.busy_ns);
    law(p.communication_ns <= p.busy_ns, "a rank's communication exceeds its busy time",
        p.communication_ns, p.busy_ns);
    law(p.exposed_communication_ns <= p.communication_ns,
        "exposed communication exceeds the communication", p.exposed_communication_ns,
        p.communication_ns);
  }
  std::uint64_t matched = 0, last = 0;
  for (const ranks::CollectiveSkew& c : a.collectives) {
    law(c.mean_skew_ns <= c.max_skew_ns, "a collective's mean skew exceeds its largest",
        c.mean_skew_ns, c.max_skew_ns);
    matched += c.count;
  }
  for (const ranks::Straggler& s : a.stragglers) last += s.times_last;
  law(last <= matched, "more ranks arrived last than calls were matched", last, matched);
}

std::string ranks_text(std::vector<ranks::RankProfile> profiles) {
  const ranks::RanksAnalysis analysis = ranks::analyze_ranks(std::move(profiles));
  check_laws(analysis);
  static const std::set<std::string> kHeadings = {"# Ranks",       "## Findings",
                                                  "## Health",     "## Per rank (measured region)",
                                                  "## Stragglers", "## Clock alignment"};
  fuzz::check_markdown_structure(ranks::ranks_markdown(analysis), kHeadings);
  output::JsonStream w;
  ranks::write_ranks_json(w, analysis);
  w.finish();
  return w.take();
}

struct Outcome {
  std::string text;
  std::optional<Error> error;
  // Whether every file states another rank: then the merge does not depend on their order (of
  // two files of one rank the first given is kept, by the local run and the reduce alike).
  bool distinct_ranks = false;
};

Outcome local_run(const std::vector<std::filesystem::path>& files, unsigned jobs) {
  try {
    std::vector<ranks::RankProfile> profiles =
        ranks::read_rank_profiles(files, ImportOptions{}, jobs);
    std::set<std::uint64_t> seen;
    bool distinct = true;
    for (const ranks::RankProfile& p : profiles) distinct = seen.insert(p.rank).second && distinct;
    return {ranks_text(std::move(profiles)), std::nullopt, distinct};
  } catch (const Error& e) {
    return {{}, e};
  }
}

// `--map` of every rank, then `--reduce` of the summaries, in the order of `files` or reversed.
std::string map_and_reduce(const std::vector<std::filesystem::path>& files, bool reversed) {
  std::vector<ranks::RankProfile> profiles;
  for (std::size_t n = 0; n < files.size(); ++n) {
    const std::size_t i = reversed ? files.size() - 1 - n : n;
    const ranks::RankProfile mapped = ranks::read_rank_profiles({files[i]}, ImportOptions{}, 1)[0];
    output::JsonStream w;
    ranks::write_rank_summary(w, mapped);
    w.finish();
    const std::filesystem::path summary =
        fuzz::write_scratch("rank-" + std::to_string(i) + ".summary.json", w.take());
    try {
      profiles.push_back(ranks::read_rank_summary(summary));
    } catch (const Error& e) {
      fail("a rank summary we wrote does not read back", e.what());
    }
  }
  return ranks_text(std::move(profiles));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz::Split in = fuzz::split_control(data, size);
  const std::size_t count = 2 + in.control % 3;
  const std::size_t share = in.rest.size() / count;
  std::vector<std::filesystem::path> files;
  for (std::size_t r = 0; r < count; ++r) {
    const auto* part = reinterpret_cast<const std::uint8_t*>(in.rest.data()) + r * share;
    files.push_back(fuzz::write_scratch("rank-" + std::to_string(r) + ".jsonl",
                                        fuzz::generated_trace(part, share)));
  }
  if (in.control & 4) files.push_back(files.front());

  const Outcome one = local_run(files, 1);
  const Outcome two = local_run(files, 2);
  if (one.error || two.error) {
    if (!one.error || !two.error || !fuzz::same_error(*one.error, *two.error))
      fail("ranks -j 2 ends otherwise than -j 1",
           one.error ? one.error->what() : (two.error ? two.error->what() : ""));
    return 0;
  }
  if (two.text != one.text) fail("ranks -j 2 differs from -j 1", one.text);
  fuzz::check_valid_json(one.text, "ranks/1 is not valid JSON");
  if (map_and_reduce(files, false) != one.text)
    fail("map and reduce differ from the local run", one.text);
  if (one.distinct_ranks && map_and_reduce(files, true) != one.text)
    fail("map and reduce in the reverse order differ from the local run", one.text);
  return 0;
}
