// The one door into a built document. Tests build documents that the stream rules of trace6.md
// trace6.md §5.2 forbid (duplicate span ids, a parent that does not exist, hand-made spans at
// scale) to check how health and the analyses treat them; every other stage only reads documents.
#pragma once

#include <vector>

#include "candle_graph/trace_document.hpp"

namespace candle_graph {

class DocumentEditor {
 public:
  explicit DocumentEditor(TraceDocument& doc) : doc_(doc) {}

  TraceRunMeta& run() { return doc_.run_; }
  std::vector<SpanRecord>& spans() { return doc_.spans_; }
  std::vector<OpEvent>& ops() { return doc_.ops_; }
  std::vector<OpEvent>& device_ops() { return doc_.device_ops_; }
  std::vector<TensorEvent>& tensors() { return doc_.tensors_; }
  std::vector<MemoryEvent>& memory() { return doc_.memory_; }
  std::vector<GradientEvent>& gradients() { return doc_.gradients_; }
  std::vector<EdgeEvent>& edges() { return doc_.edges_; }
  // Where new strings of edited events live (they must outlive the document's views).
  Arena& arena() { return *doc_.arena_; }
  // Rebuilds the derived links after an edit (analyses refuse a document whose links are stale).
  void reindex() { doc_.reindex(); }

 private:
  TraceDocument& doc_;
};

}  // namespace candle_graph
