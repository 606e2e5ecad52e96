// TraceHealth as JSON: the `health` member of validation/1, evidence/1, summary/1, the query
// results and the viewer payload, in declaration order or with sorted keys (trace6.md §9.5).
#pragma once

#include "candle_graph/health.hpp"
#include "output/json_stream.hpp"

namespace candle_graph {

// The `validate` command's document: {schema, trace, events, health}.
inline constexpr std::string_view kValidationSchema = "candle-graph/validation/1";

// {trusted, issues: [{severity, code, message}], coverage}
void write_health_json(output::JsonStream& w, const TraceHealth& health, output::KeyOrder order);
// The 13 EvidenceCoverage counters.
void write_coverage_json(output::JsonStream& w, const EvidenceCoverage& coverage,
                         output::KeyOrder order);

}  // namespace candle_graph
