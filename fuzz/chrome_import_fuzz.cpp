// libFuzzer target for the reader of our own Chrome export (docs/format/chrome.md): any bytes
// must end in a document or a clean Error naming the file; a document must round-trip through
// trace/6, and the read with the scan on a second thread (`-j 2`) must end alike. The recogniser
// sees the same bytes and must not crash either.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "document_checks.hpp"
#include "fuzz_support.hpp"
#include "import/chrome/chrome_importer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace candle_graph;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const auto path = fuzz::write_scratch("fuzz.perfetto.json", bytes);
  const import::chrome::ChromeExportImporter importer;
  InputHead head{path, bytes.substr(0, kInputHeadBytes), false};
  (void)importer.recognizes(head);
  fuzz::check_import_on_one_and_two_threads(importer, path, ImportOptions{}, "fuzz.perfetto.json");
  return 0;
}
