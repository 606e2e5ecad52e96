#include "import/registry/convert.hpp"

#include "candle_graph/error.hpp"
#include "candle_graph/import.hpp"
#include "import/chrome/chrome_importer.hpp"
#include "import/pytorch/pytorch_importer.hpp"
#include "output/atomic_file.hpp"

namespace candle_graph::import {

ConvertResult convert_pytorch_trace(const std::filesystem::path& input,
                                    const std::filesystem::path& output,
                                    const ImportOptions& options) {
  const std::string path = input.string();
  std::string head_bytes;
  const InputHead head = read_input_head(input, head_bytes);
  if (output::same_file(input, output)) {
    throw Error(path, 0, "the output path names the input file; refusing to overwrite it");
  }
  static const chrome::ChromeExportImporter chrome_export;
  static const pytorch::PytorchImporter pytorch;
  const Importer& importer = chrome_export.recognizes(head)
                                 ? static_cast<const Importer&>(chrome_export)
                                 : static_cast<const Importer&>(pytorch);
  ImportedTrace t = importer.read(input, options);
  write_jsonl(output, t.document);
  ConvertResult r;
  static_cast<ImportReport&>(r) = std::move(t.report);
  r.spans = t.document.spans().size();
  r.device_ops = t.document.device_ops().size();
  r.ops = t.document.ops().size() + r.device_ops;
  r.memory_events = t.document.memory().size();
  return r;
}

}  // namespace candle_graph::import
