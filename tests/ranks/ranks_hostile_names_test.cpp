// `ranks --markdown` on two real DLRM ranks (../shared/fixtures, SOURCES.md) whose shared NCCL
// kernel is renamed to hold Markdown (a heading, a table row, a list item, `|`, backticks) and
// terminal controls, given under file names that hold them too. The findings quote the kernel and
// the per-rank table names the files, so such names used to write their own lines into the
// report. What is checked is read off the output's bytes (support/markdown_checks.hpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/files.hpp"
#include "support/markdown_checks.hpp"
#include "support/run_program.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
namespace tst = candle_graph::testing;

namespace {

using tst::markdown_structure_error;

const std::string kKernel =
    "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)";
// Still an NCCL kernel by its name (communication, matched across the ranks), then the forgeries.
const std::string kHostile =
    "ncclKernel_x|y`z``\n## Forged heading\n| forged | row |\n\x1b[2J\x07\r- forged item";

// The DLRM ranks' GPU model, and one with a pipe and backticks, as JSON writes them.
const std::string kModel = "\"Tesla V100-SXM2-32GB\"";
const std::string kHostileModel = "\"V100|`forged` cell\"";

// The trace's text with the kernel's every name replaced by the hostile one, as JSON writes it.
std::string with_hostile_kernel(std::string text) {
  const std::string from = '"' + kKernel + '"', to = nlohmann::json(kHostile).dump();
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
    text.replace(at, from.size(), to);
    at += to.size();
  }
  return text;
}

fs::path rank_file(int rank) {
  const fs::path dir = tst::shared_fixture("pytorch-chrome-trace/ranks-param-dlrm-8rank-v100");
  for (const fs::directory_entry& e : fs::directory_iterator(dir))
    if (e.path().filename().string().starts_with("worker" + std::to_string(rank) + "_"))
      return e.path();
  ADD_FAILURE() << "no worker" << rank << " trace in " << dir;
  return {};
}

}  // namespace

TEST(RanksHostileNames, TheMarkdownKeepsItsOwnStructure) {
  tst::TempDir dir("cg_ranks_hostile");
  std::vector<std::string> args = {"ranks"};
  for (const int rank : {0, 1}) {
    const std::string text = tst::read_file(rank_file(rank).string());
    std::string hostile = with_hostile_kernel(text);
    ASSERT_NE(hostile, text) << "the kernel is not in rank " << rank << "'s trace";
    // Rank 0's GPU model gets a pipe and backticks (a model with a line break is not taken).
    for (std::size_t at = 0; rank == 0 && (at = hostile.find(kModel, at)) != std::string::npos;
         at += kHostileModel.size())
      hostile.replace(at, kModel.size(), kHostileModel);
    // Any byte but `/` may be in a file name.
    const std::string name = "rank" + std::to_string(rank) + "|`\n## forged\x1b[2J.json";
    args.push_back(dir.write(name, hostile).string());
  }
  const fs::path md = dir / "ranks.md";
  args.insert(args.end(), {"--markdown", md.string(), "-o", (dir / "ranks.json").string()});
  const tst::RunResult r = tst::run_cli(args);
  ASSERT_EQ(r.exit_code, 0) << tst::describe(r);
  const std::string text = tst::read_file(md.string());
  EXPECT_EQ(markdown_structure_error(
                text, {"# Ranks", "## Findings", "## Health", "## Per rank (measured region)",
                       "## Stragglers", "## Clock alignment"}),
            "")
      << text;
  // The kernel is quoted in a finding and the files are named in the table, their line breaks
  // and controls shown as escapes, and a `[` that could start a link escaped.
  EXPECT_NE(
      text.find("ncclKernel_x|y`z``\\n## Forged heading\\n| forged | row |\\n\\x1b\\[2J\\x07\\r- "
                "forged item: arrival skew"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("rank0\\|`\\n## forged\\x1b\\[2J.json"), std::string::npos) << text;
  // The model in the GPU column, its pipe escaped so the row keeps its cells.
  EXPECT_NE(text.find("| cuda:0 (V100\\|`forged` cell) | "), std::string::npos) << text;
  // The JSON keeps the name as it is.
  const nlohmann::json doc = nlohmann::json::parse(tst::read_file((dir / "ranks.json").string()));
  bool quoted = false;
  for (const nlohmann::json& c : doc["collectives"]) quoted = quoted || c["name"] == kHostile;
  EXPECT_TRUE(quoted) << doc["collectives"].dump();
}
