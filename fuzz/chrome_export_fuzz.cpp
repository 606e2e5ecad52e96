// libFuzzer target for the Chrome export (src/export) and its way back (src/import/chrome): every
// trace/6 file the reader accepts and health trusts is exported, and
//   - the export with its slices formatted on 2 threads, in batches of 3 events so that batches
//     meet everywhere, is byte for byte the one-thread export;
//   - the text is valid JSON (simdjson's DOM parser, which checks the whole document);
//   - our Chrome importer reads it back without an error, with as many spans and ops
//     (docs/format/chrome.md: the export carries every span and op, `convert` brings them back).
// Input: the trace/6 file.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "candle_graph/error.hpp"
#include "candle_graph/health.hpp"
#include "candle_graph/trace.hpp"
#include "export/chrome_trace_writer.hpp"
#include "fuzz_support.hpp"
#include "import/chrome/chrome_importer.hpp"
#include "json_check.hpp"
#include "trace_input.hpp"

namespace {

using namespace candle_graph;
using candle_graph::fuzz::fail;

std::string export_text(const TraceDocument& doc, unsigned threads) {
  std::string text;
  exporting::write_chrome_trace(
      doc, [&](std::string_view piece) { text.append(piece); }, threads);
  return text;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  return fuzz::set_test_hook("CANDLE_GRAPH_TEST_EXPORT_BATCH", "3");
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const TraceDocument doc = fuzz::trace_input(data, size, fuzz::Traces::trusted);

  const std::string text = export_text(doc, 1);
  if (export_text(doc, 2) != text) fail("the export on 2 threads differs from one thread's", "");
  fuzz::check_valid_json(text, "the export is not valid JSON");

  const auto path = fuzz::write_scratch("fuzz.perfetto.json", text);
  try {
    const ImportedTrace back = import::chrome::ChromeExportImporter{}.read(path, ImportOptions{});
    if (back.document.spans().size() != doc.spans().size() ||
        back.document.ops().size() != doc.ops().size())
      fail("the export read back has other span or op counts", text);
  } catch (const Error& e) {
    fail("our importer refuses our export", std::string(e.what()) + "\n" + text);
  }
  return 0;
}
