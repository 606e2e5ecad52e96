// libFuzzer target for the PyTorch profiler importer, whole file: Kineto objects and legacy
// arrays, plain or gzip, with every way of choosing the measured step. Any bytes must end in a
// document or a clean Error naming the file; a document must round-trip through trace/6 and be
// one health trusts (`convert` promises a trace that validates as trusted), unless its host ops
// come from several processes (`processes_merged`, the one error allowed). The read with the
// scan on a second thread (`-j 2`) must end as the one-thread read ends: an equal document and
// import report, or the same error.
// Bytes the importer refuses are read again as the recipe of a Kineto trace
// (generated_kineto.hpp), which goes through the same checks and, converted, through the
// evidence's laws (evidence_laws.hpp): mutated JSON rarely gets past the parser.
//
// Input: one control byte, then the file. Control bit 0: gzip the file; bit 1: --step all;
// bit 2: --step N with N = the top five bits.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "candle_graph/health.hpp"
#include "document_checks.hpp"
#include "evidence/packet_builder.hpp"
#include "evidence_laws.hpp"
#include "fuzz_support.hpp"
#include "generated_kineto.hpp"
#include "import/pytorch/pytorch_importer.hpp"

namespace {

using namespace candle_graph;

std::optional<TraceDocument> check_file(std::string_view bytes, bool gzip,
                                        const ImportOptions& options) {
  const std::string name = gzip ? "fuzz.json.gz" : "fuzz.json";
  const auto path = fuzz::write_scratch(name, gzip ? fuzz::gzip_member(bytes) : bytes);
  return fuzz::check_import_on_one_and_two_threads(import::pytorch::PytorchImporter{}, path,
                                                   options, name, fuzz::Converted::trusted);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz::Split in = fuzz::split_control(data, size);
  const bool gzip = (in.control & 1) != 0;
  ImportOptions options;
  options.all_steps = (in.control & 2) != 0;
  if (in.control & 4) options.step = in.control >> 3;
  if (check_file(in.rest, gzip, options)) return 0;

  const std::string generated =
      fuzz::generated_kineto(reinterpret_cast<const std::uint8_t*>(in.rest.data()), in.rest.size());
  // The evidence is built only from a trace health trusts (every command refuses the others, as
  // build_packet does): a generated trace of two processes is `processes_merged`.
  if (const std::optional<TraceDocument> doc = check_file(generated, gzip, options);
      doc && analyze_health(*doc).trusted)
    fuzz::check_evidence_laws(*doc,
                              evidence::build_packet(*doc, nullptr, std::nullopt, std::nullopt));
  return 0;
}
