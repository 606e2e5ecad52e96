// What no name in a trace may change in a Markdown output (`report --markdown`, `ranks
// --markdown`): its headings are its own, each once; every table row has its header's cells; no
// control byte but the line ends. Names from the trace that held a line break used to start
// headings, list items and rows.
#pragma once

#include <set>
#include <string>

#include "fuzz_support.hpp"
#include "support/markdown_checks.hpp"

namespace candle_graph::fuzz {

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
  const std::string error = testing::markdown_structure_error(md, headings);
  if (!error.empty()) fail(error.c_str(), md);
}

}  // namespace candle_graph::fuzz
