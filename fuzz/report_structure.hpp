// What no name in a trace may change in a Markdown output (`report --markdown`, `ranks
// --markdown`): its headings are its own, each once; every table row has its header's cells; no
// control byte but the line ends. Names from the trace that held a line break used to start
// headings, list items and rows.
#pragma once

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "support/markdown_cells.hpp"

namespace candle_graph::fuzz {

using testing::cell_borders;
using testing::control_bytes;

// The headings `report --markdown` writes (with every optional section).
inline const std::set<std::string>& report_headings() {
  static const std::set<std::string> headings = {
      "# candle-graph evidence", "## Findings",
      "## Evidence gaps",        "## Coverage",
      "## Tensor checkpoints",   "## Gradient evidence",
      "## Baseline comparison",  "## Where the time went",
      "## Memory at the peak",   "## GPU",
      "## GPU from the trace",   "## Profiler steps",
      "## Against the baseline"};
  return headings;
}

inline void check_markdown_structure(const std::string& md, const std::set<std::string>& headings) {
  if (control_bytes(md) != 0) fail("a control byte in the Markdown", md);
  std::vector<std::string> lines;
  std::istringstream in(md);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::set<std::string> seen;
  std::size_t header = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.starts_with("#") && (!headings.contains(line) || !seen.insert(line).second))
      fail("a heading the output does not write, or twice", line);
    if (!line.starts_with("|")) continue;
    if (i == 0 || !lines[i - 1].starts_with("|")) header = cell_borders(line);
    if (cell_borders(line) != header) fail("a table row without its header's cells", line);
  }
}

}  // namespace candle_graph::fuzz
