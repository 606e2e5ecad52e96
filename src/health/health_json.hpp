// TraceHealth as JSON (the `health` member of validation/1 and evidence/1), declaration order.
#pragma once

#include "candle_graph/health.hpp"
#include "output/json_document.hpp"

namespace candle_graph {

output::OrderedJson health_to_json(const TraceHealth& health);
output::OrderedJson coverage_to_json(const EvidenceCoverage& coverage);

}  // namespace candle_graph
