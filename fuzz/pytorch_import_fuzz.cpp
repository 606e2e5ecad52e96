// libFuzzer target for the PyTorch profiler importer, whole file: Kineto objects and legacy
// arrays, plain or gzip, with every way of choosing the measured step. Any bytes must end in a
// document or a clean Error naming the file; a document must round-trip through trace/6 and be
// one health trusts (`convert` promises a trace that validates as trusted). The read with the
// scan on a second thread (`-j 2`) must end as the one-thread read ends: an equal document and
// import report, or the same error.
//
// Input: one control byte, then the file. Control bit 0: gzip the file; bit 1: --step all;
// bit 2: --step N with N = the top five bits.
#include <cstddef>
#include <cstdint>

#include "document_checks.hpp"
#include "fuzz_support.hpp"
#include "import/pytorch/pytorch_importer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace candle_graph;
  const fuzz::Split in = fuzz::split_control(data, size);
  const bool gzip = (in.control & 1) != 0;
  const std::string name = gzip ? "fuzz.json.gz" : "fuzz.json";
  const auto path = fuzz::write_scratch(name, gzip ? fuzz::gzip_member(in.rest) : in.rest);
  ImportOptions options;
  options.all_steps = (in.control & 2) != 0;
  if (in.control & 4) options.step = in.control >> 3;
  fuzz::check_import_on_one_and_two_threads(import::pytorch::PytorchImporter{}, path, options, name,
                                            fuzz::Converted::trusted);
  return 0;
}
