// The last pass of the PyTorch importer: the planned spans, placed ops and paired memory events
// become trace/6 events (meta first, with the source's identity and every repair count as tags).
#pragma once

#include <string>

#include "candle_graph/importer.hpp"
#include "import/pytorch/op_placement.hpp"

namespace candle_graph::import::pytorch {

// Everything the passes decided about one trace.
struct Assembly {
  const Model* model = nullptr;
  const trace_event::SourceInfo* source = nullptr;
  std::string entrypoint;
  Region region;
  SpanPlan spans;
  PlacedOps ops;
  PlacedMemory memory;
  std::vector<ProfilerStepRecord> steps;  // every ProfilerStep#N of the source
};

// The run's identity (run id, correlation id, timestamp, device, phase) and tags: the source's
// (`source.*`) and the repairs (`convert.*`).
void emit_meta(const Assembly& a, const ImportReport& report, TraceDocumentBuilder& out);
// Spans in pre-order (each span_start followed by its span_end), then ops, then memory events.
// `progress` hears the events placed out of the events to place.
void emit_events(const Assembly& a, TraceDocumentBuilder& out,
                 const ProgressCallback& progress = {});

}  // namespace candle_graph::import::pytorch
