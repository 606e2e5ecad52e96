// build_from_trace with its memory replay (step 2) started earlier by the caller: the replay reads
// the document alone, so a caller with threads starts it before the health checks and the graph
// takes it over instead of replaying.
#pragma once

#include <future>

#include "candle_graph/graph.hpp"

namespace candle_graph::graph {

// analyze_memory(doc, options.memory_timeline) on a thread of its own when it may run beside the
// rest: with threads, unless both the edges and a memory timeline are built (the edge sort's
// scratch space and the timeline would then be held at once, raising `import`'s peak memory).
// Otherwise no replay (an invalid future): build_from_trace replays after the edges.
std::future<MemoryProfile> start_memory_replay(const TraceDocument& doc,
                                               const GraphOptions& options);

// build_from_trace(doc, health, options) with the memory profile `memory` will deliver.
ExecutionGraph build_from_trace(const TraceDocument& doc, const TraceHealth& health,
                                const GraphOptions& options, std::future<MemoryProfile> memory);

}  // namespace candle_graph::graph
