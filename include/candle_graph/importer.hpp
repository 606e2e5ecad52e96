// The one interface every input format implements (docs/architecture.md, "Adding an input
// format"): an importer recognises its format from the first bytes of a file and reads the whole
// file into a TraceDocument, counting what it had to repair, drop or leave unmapped. The registry
// of importers is candle_graph/import.hpp; a new format is one Importer plus one line there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "candle_graph/trace_document.hpp"
#include "candle_graph/trace_io.hpp"

namespace candle_graph {

struct ImportOptions {
  // The profiler step (ProfilerStep#N) to measure; by default the importer's own choice (for
  // PyTorch traces the last complete step). Formats without steps refuse a step.
  std::optional<std::uint64_t> step;
  // Every step together as one measured region (`--step all`).
  bool all_steps = false;
  // Called now and then while the file is read: bytes read, the file's size.
  ProgressCallback progress;
  // Called now and then while the events of a format that is converted (PyTorch's, a Chrome
  // export's) are placed into the document after the read: events placed, events to place
  // (0 of 1 at the start, before the count is known).
  ProgressCallback converting;
  // Threads that parse the file, where the format's reader can split it (trace/6); any number
  // gives the same document and the same errors.
  unsigned threads = 1;
};

// What an importer did besides copying events: the source's dialect and size, the measured
// region it chose, and everything it repaired, dropped or did not map, counted by reason.
// ImportReport::format, also the tag `source.format` of a converted trace.
inline constexpr std::string_view kKinetoFormat = "kineto";
inline constexpr std::string_view kLegacyProfilerFormat = "legacy-autograd-profiler";
inline constexpr std::string_view kChromeExportFormat = "candle-graph-chrome";
// The tag of a PyTorch trace naming the model of the run's GPU (Kineto's deviceProperties), and
// the longest model name taken.
inline constexpr std::string_view kDeviceNameTag = "source.device_name";
inline constexpr std::size_t kLongestDeviceName = 256;

// Whether `name` is taken as a GPU's model: not empty, at most kLongestDeviceName bytes, and
// without control characters (it goes on one line of a report, a table cell, a heading).
inline bool is_gpu_model_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > kLongestDeviceName) return false;
  for (const char c : name) {
    const auto ch = static_cast<unsigned char>(c);
    if (ch < 0x20 || ch == 0x7f) return false;
  }
  return true;
}

// The model of the run's GPU: the tag kDeviceNameTag where it holds a name taken as one. The
// importer writes only such names, but a trace/6 file written by hand or by another producer may
// hold anything in the tag; every output then names no model, as for a trace without the tag.
inline std::optional<std::string_view> gpu_model(const TraceRunMeta& run) {
  const std::optional<std::string_view> name = run.find_tag(kDeviceNameTag);
  if (!name || !is_gpu_model_name(*name)) return std::nullopt;
  return name;
}

// A device with its GPU's model as every output names it, `cuda:3 (NVIDIA A100-PG509-200)`, or the
// device alone when the model is unknown.
inline std::string device_with_model(std::string_view device,
                                     const std::optional<std::string>& model) {
  return model ? std::string(device) + " (" + *model + ")" : std::string(device);
}

struct ImportReport {
  std::string format;    // "trace6", kKinetoFormat, kLegacyProfilerFormat, kChromeExportFormat
  std::string measured;  // the measured span's name ("ProfilerStep#3"); empty for trace/6
  std::uint64_t source_events = 0;
  // (reason, count), sorted by reason, zero counts left out; for converted traces the same
  // counts are in the meta tags (`convert.<reason>`).
  std::vector<std::pair<std::string, std::uint64_t>> repairs;
};

struct ImportedTrace {
  TraceDocument document;
  ImportReport report;
};

// The first bytes of an input, decompressed when the file is gzip, for recognising its format.
struct InputHead {
  std::filesystem::path path;
  std::string_view bytes;  // at most kInputHeadBytes
  bool gzip = false;
};
inline constexpr std::size_t kInputHeadBytes = 64 * 1024;

class Importer {
 public:
  virtual ~Importer() = default;
  // The format's name as users know it ("trace/6 JSONL", "PyTorch profiler JSON"), for errors
  // and --help.
  virtual std::string_view name() const noexcept = 0;
  // True when `head` looks like this format. Reads nothing but `head`.
  virtual bool recognizes(const InputHead& head) const = 0;
  // Reads the whole file into a document. Throws Error naming the file (and the line or byte
  // offset) when it is malformed or cannot be mapped; never returns a partial document.
  virtual ImportedTrace read(const std::filesystem::path& path,
                             const ImportOptions& options) const = 0;
};

// Builds a document from events in stream order, enforcing the stream rules of trace6.md §5.2
// (meta first and once, unique span ids, every span_end after its span_start, no second
// span_end). Strings and arrays are copied into the document, so the events may point anywhere.
class TraceDocumentBuilder {
 public:
  // `source` names the input in errors (which also give the 1-based event number).
  explicit TraceDocumentBuilder(std::string source);
  TraceDocumentBuilder(TraceDocumentBuilder&&) noexcept;
  TraceDocumentBuilder& operator=(TraceDocumentBuilder&&) noexcept;
  ~TraceDocumentBuilder();

  void add(const TraceEvent& event);
  // How many events of each kind will be added, for an importer that knows before it adds them:
  // the document's arrays are then allocated once at their final size, where growing by doubling
  // takes fresh memory and a copy at every step (about twice the memory touched, and the old and
  // the new array held at once). Counts too small or too large are only less helpful.
  struct Counts {
    std::size_t spans = 0, ops = 0, device_ops = 0, memory = 0;
  };
  void reserve(const Counts& counts);
  // The document, with its derived links. The builder is spent afterwards.
  TraceDocument finish();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace candle_graph
