// The public face of the assembler: importers build documents event by event through it.
#include "candle_graph/importer.hpp"
#include "trace/document_assembler.hpp"

namespace candle_graph {

class TraceDocumentBuilder::Impl {
 public:
  explicit Impl(std::string source) : assembler(std::move(source)) {}
  DocumentAssembler assembler;
  std::uint64_t events = 0;
};

TraceDocumentBuilder::TraceDocumentBuilder(std::string source)
    : impl_(std::make_unique<Impl>(std::move(source))) {}
TraceDocumentBuilder::TraceDocumentBuilder(TraceDocumentBuilder&&) noexcept = default;
TraceDocumentBuilder& TraceDocumentBuilder::operator=(TraceDocumentBuilder&&) noexcept = default;
TraceDocumentBuilder::~TraceDocumentBuilder() = default;

void TraceDocumentBuilder::add(const TraceEvent& event) {
  impl_->assembler.add(event, ++impl_->events);
}

void TraceDocumentBuilder::reserve(const Counts& counts) {
  impl_->assembler.reserve(counts.spans, counts.ops, counts.device_ops, counts.memory);
}

TraceDocument TraceDocumentBuilder::finish() {
  return impl_->assembler.finish();
}

}  // namespace candle_graph
