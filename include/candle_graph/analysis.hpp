// The analyses users read in one include: the memory profile, the execution graph graph/3 and
// the baseline comparison comparison/1 (docs/format/trace6.md §7–§9.4).
#pragma once

#include "candle_graph/comparison.hpp"  // IWYU pragma: export
#include "candle_graph/graph.hpp"       // IWYU pragma: export
#include "candle_graph/memory.hpp"      // IWYU pragma: export
