// trace/6 JSONL (docs/format/trace6.md) through the native reader: the format every other
// importer converts to, read at the reader's full speed.
#pragma once

#include "candle_graph/importer.hpp"

namespace candle_graph::import::trace6 {

class Trace6Importer final : public Importer {
 public:
  std::string_view name() const noexcept override { return "trace/6 JSONL"; }
  // The first non-blank line is a JSON object that starts with its "kind" member (every writer
  // of trace/6 puts it first) or names a candle-graph trace schema.
  bool recognizes(const InputHead& head) const override;
  ImportedTrace read(const std::filesystem::path& path,
                     const ImportOptions& options) const override;
};

}  // namespace candle_graph::import::trace6
