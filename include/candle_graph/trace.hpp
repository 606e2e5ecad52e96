// The trace/6 protocol in one include: the vocabulary, the events, the parsed document and the
// reader/writer entry points (docs/format/trace6.md §3–§5).
#pragma once

#include "candle_graph/trace_document.hpp"  // IWYU pragma: export
#include "candle_graph/trace_events.hpp"    // IWYU pragma: export
#include "candle_graph/trace_format.hpp"    // IWYU pragma: export
#include "candle_graph/trace_io.hpp"        // IWYU pragma: export
