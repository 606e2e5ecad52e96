// PyTorch profiler traces -> TraceDocument (docs/format/pytorch.md §1.7): Kineto JSON of every
// layout since 2021 and the legacy autograd profiler's array, plain or gzip. One representative
// step becomes the measured region; every repair is counted (ImportReport, `convert.*` tags).
#pragma once

#include "candle_graph/importer.hpp"

namespace candle_graph::import::pytorch {

class PytorchImporter final : public Importer {
 public:
  std::string_view name() const noexcept override { return "PyTorch profiler JSON"; }
  // Any JSON object or array: the registry asks the stricter importers first.
  bool recognizes(const InputHead& head) const override;
  ImportedTrace read(const std::filesystem::path& path,
                     const ImportOptions& options) const override;
};

}  // namespace candle_graph::import::pytorch
