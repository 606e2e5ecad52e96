// Loads one analysed run (a trace document and its evidence packet) into a candle-graph/sql/1
// database. Every number is copied from the analyses (graph/3 nodes, the memory profile, health,
// evidence) as they are, never recomputed, so a query answers what `import` reports.
#pragma once

#include <functional>
#include <string_view>

#include "evidence/evidence_packet.hpp"
#include "sqlite/sqlite_handle.hpp"
#include "sqlite/step_progress.hpp"

namespace candle_graph::sqlite {

// True when `runs` already holds `run_id`.
bool has_run(const Connection& db, std::string_view run_id);

// Inserts one run with prepared statements. The caller owns the transaction (one for all runs)
// and the indices. `source` is the trace path as the user gave it (the runs.source column).
// Throws Error naming the database when the run_id is already present.
// The load overlaps the analysis: the tables that need only the document (op inputs, tensors,
// memory events, device memory, gradients) are inserted on a second thread while `analyse`
// builds the packet of `doc` on the calling thread; then the rest. Exceptions of either side
// are rethrown (the analysis' first) after both finished. `progress` (when set) hears the rows
// inserted out of each step's rows: "trace tables" (from the loading thread), then "analysis
// tables".
void load_run_overlapped(const Connection& db, const TraceDocument& doc, std::string_view source,
                         const std::function<evidence::EvidencePacket()>& analyse,
                         const StepProgress& progress = {});

}  // namespace candle_graph::sqlite
