// candle-graph's own Chrome Trace Event export (docs/format/chrome.md) -> TraceDocument: spans
// and ops come back from the `span` and `op` slices' args with their ids and exact nanoseconds,
// the run from otherData. Counters, flows and metadata are derived views and are counted, not read.
#pragma once

#include "candle_graph/importer.hpp"

namespace candle_graph::import::chrome {

class ChromeExportImporter final : public Importer {
 public:
  std::string_view name() const noexcept override { return "candle-graph Chrome export"; }
  // `{"traceEvents":[` followed, within the head, by a `span` slice with a span_id (the export
  // writes the spans first).
  bool recognizes(const InputHead& head) const override;
  ImportedTrace read(const std::filesystem::path& path,
                     const ImportOptions& options) const override;
};

}  // namespace candle_graph::import::chrome
