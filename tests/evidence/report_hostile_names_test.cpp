// Names from the trace cannot forge a report: the spec example with its entrypoint, span names,
// op names and a tensor id replaced by text holding line breaks, a heading, a table row, a list
// item, `|`, backticks and terminal controls, through the real binary. The Markdown must keep its
// own headings only, each once, every table row the cells of its header, and no control byte but
// its own line ends; `--headline` as many lines as the unchanged fixture's and no control byte
// either; an error quoting such a name shows its controls as escapes. What is checked is read off
// the outputs' bytes, not from the code that writes them.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/evidence_helpers.hpp"
#include "support/files.hpp"
#include "support/markdown_checks.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;

namespace {

using candle_graph::testing::control_bytes;
using candle_graph::testing::markdown_structure_error;

// U+202E (E2 80 AE), the right-to-left override, makes what follows it read backwards.
const std::string kRightToLeft = "\xE2\x80\xAE";
const std::string kHostile =
    "x|y`z``\n## Forged heading\n| forged | row |\n\x1b[2J\x07\r- forged item" + kRightToLeft +
    "\n";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The spec example with every name a person reads replaced by `kHostile` plus a suffix that
// keeps them distinct; `dangling` adds an edge from a span of that name that does not exist,
// which makes the trace untrusted.
std::string hostile_trace(const candle_graph::testing::TempDir& dir, bool dangling) {
  std::string text;
  std::vector<std::string> lines =
      lines_of(cg_test::read_file(cg_test::fixture_path("spec_example.jsonl")));
  if (dangling)
    lines.push_back(nlohmann::json{
        {"kind", "edge"}, {"from_span", kHostile}, {"to_span", "s1"}, {"duration_ns", 1}}
                        .dump());
  int n = 0;
  for (const std::string& line : lines) {
    nlohmann::ordered_json e = nlohmann::ordered_json::parse(line);
    const std::string kind = e["kind"];
    if (kind == "meta") e["entrypoint"] = kHostile + "entry";
    if (kind == "span_start" && e.contains("parent_id")) e["name"] = kHostile + std::to_string(++n);
    if (kind == "op") e["op_name"] = kHostile + e["op_name"].get<std::string>();
    if (kind == "tensor") e["tensor_id"] = kHostile + "tensor";
    text += e.dump() + "\n";
  }
  return dir.write(dangling ? "untrusted.jsonl" : "hostile.jsonl", text).string();
}

struct Report {
  std::string markdown, headline;
};

Report report_of(const candle_graph::testing::TempDir& dir, const std::string& trace) {
  const fs::path md = dir / "report.md";
  const auto r = cg_test::run_cli("report '" + trace + "' --json " + (dir / "e.json").string() +
                                  " --markdown " + md.string() + " --headline");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return {cg_test::read_file(md.string()), r.out};
}

}  // namespace

TEST(ReportHostileNames, TheMarkdownKeepsItsOwnStructure) {
  candle_graph::testing::TempDir dir("cg_hostile");
  const Report report = report_of(dir, hostile_trace(dir, false));
  const std::string& md = report.markdown;
  // The report's own headings (the original's sections and the added ones this trace has),
  // each once and all there; every table row with its header's cells; no control byte.
  const std::set<std::string> own = {"# candle-graph evidence", "## Findings",
                                     "## Evidence gaps",        "## Coverage",
                                     "## Tensor checkpoints",   "## Gradient evidence",
                                     "## Where the time went",  "## Memory at the peak"};
  EXPECT_EQ(markdown_structure_error(md, own), "") << md;
  std::set<std::string> headings;
  for (const std::string& line : lines_of(md)) {
    if (line.starts_with("#")) headings.insert(line);
    EXPECT_FALSE(line.starts_with("- forged") || line.starts_with("| forged")) << line;
  }
  EXPECT_EQ(headings, own) << md;
  EXPECT_EQ(md.find(kRightToLeft), std::string::npos) << md;
  // The names are there, their line breaks and controls shown as escapes.
  EXPECT_NE(md.find("- Entrypoint: ``` x|y`z``\\n## Forged heading\\n| forged | row "
                    "|\\n\\x1b[2J\\x07\\r- forged item\\u202e\\nentry ```"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| ``` x\\|y`z``\\n## Forged heading\\n\\| forged \\| row "
                    "\\|\\n\\x1b[2J\\x07\\r- forged item\\u202e\\ntensor ``` |"),
            std::string::npos)
      << md;
}

TEST(ReportHostileNames, TheHeadlineKeepsItsLines) {
  candle_graph::testing::TempDir dir("cg_hostile");
  const Report hostile = report_of(dir, hostile_trace(dir, false));
  const Report plain = report_of(dir, cg_test::fixture_path("spec_example.jsonl"));
  EXPECT_EQ(control_bytes(hostile.headline), 0u) << hostile.headline;
  EXPECT_EQ(hostile.headline.find(kRightToLeft), std::string::npos) << hostile.headline;
  EXPECT_EQ(lines_of(hostile.headline).size(), lines_of(plain.headline).size()) << hostile.headline;
  EXPECT_TRUE(hostile.headline.starts_with("Trace:          TRUSTED, x|y`z``\\n## Forged"))
      << hostile.headline;
}

TEST(ReportHostileNames, AnErrorShowsTheControlsOfTheNamesItQuotes) {
  candle_graph::testing::TempDir dir("cg_hostile");
  const auto r = cg_test::run_cli("import '" + hostile_trace(dir, true) + "'");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(control_bytes(r.err), 0u) << r.err;
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("\\x1b[2J"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\\u202e"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(kRightToLeft), std::string::npos) << r.err;
}

// Names from real traces: torchrec names its ranges `## backward ##`, `## forward:over_arch ##`,
// and the findings of a report start with the name of the span with the most self time, so on
// the A100 and V100 runs of HTA's test data (../shared/fixtures, SOURCES.md) the Findings list
// held headings. Every heading the report may write is allowed; a list item's text must not be
// one.
TEST(ReportHostileNames, TorchrecRangeNamesStayTextInTheFindings) {
  const std::set<std::string> headings = {"# candle-graph evidence",
                                          "## Findings",
                                          "## Evidence gaps",
                                          "## Coverage",
                                          "## Tensor checkpoints",
                                          "## Gradient evidence",
                                          "## Where the time went",
                                          "## Memory at the peak",
                                          "## GPU",
                                          "## GPU from the trace",
                                          "## Profiler steps"};
  for (const char* name : {"hta-tracediff-control-a100-nccl-6steps.json.gz",
                           "hta-tracediff-test-v100-nccl-6steps.json.gz"}) {
    candle_graph::testing::TempDir dir("cg_torchrec_names");
    const std::string trace =
        candle_graph::testing::shared_fixture(std::string("pytorch-chrome-trace/") + name).string();
    const std::string md = report_of(dir, trace).markdown;
    EXPECT_EQ(markdown_structure_error(md, headings), "") << name << "\n" << md;
    EXPECT_NE(md.find("\n- \\## backward ##: "), std::string::npos) << name << "\n" << md;
  }
}
