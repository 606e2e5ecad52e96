// libFuzzer target for the streaming scanner of the PyTorch importer across chunk boundaries.
// The scanner reads the file in chunks (4 MiB by default) and carries an event, a key or a
// captured top-level value that crosses a boundary. Here it reads with 4 KiB chunks a gzip file
// of (4096 - cut) spaces + the document, which puts the first boundary `cut` bytes into the
// document and another every 4 KiB after it. Leading spaces are JSON whitespace, so the scanner
// must report exactly what it reports for the document alone read in one chunk (the same
// events, top-level values and outcome), offsets shifted by the pad.
//
// Input: two control bytes giving `cut` (0..4096), then the document.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "candle_graph/error.hpp"
#include "fuzz_support.hpp"
#include "import/trace_event/event_scanner.hpp"

namespace {

using candle_graph::import::trace_event::EventScanner;
namespace fuzz = candle_graph::fuzz;

constexpr std::size_t kChunk = 4096;  // the chunk of the split scan
// The plain scan's chunk: more than any input (`./run` passes -max_len=65536), so one chunk,
// without allocating the default 4 MiB buffer for every input.
constexpr std::size_t kWhole = std::size_t{1} << 17;

struct Recorded : EventScanner::Handler {
  std::vector<std::string> items;  // "E<offset>:<bytes>" and "T<offset>:<key>=<raw>"
  void event(std::string_view bytes, std::uint64_t offset) override {
    items.push_back("E" + std::to_string(offset) + ":" + std::string(bytes));
  }
  void top_level_value(std::string_view key, std::string_view raw, std::uint64_t offset) override {
    items.push_back("T" + std::to_string(offset) + ":" + std::string(key) + "=" + std::string(raw));
  }
};

struct Outcome {
  bool ok = false;
  EventScanner::Result result;
  Recorded recorded;
  int chunks = 0;
};

Outcome scan(const std::filesystem::path& path, std::size_t chunk_bytes = kWhole) {
  Outcome out;
  try {
    out.result = EventScanner::scan(
        path, out.recorded, [&out](std::uint64_t, std::uint64_t) { ++out.chunks; }, chunk_bytes);
    out.ok = true;
  } catch (const candle_graph::Error& e) {
    if (std::string(e.what()).find(path.filename().string()) == std::string::npos)
      fuzz::fail("an error that does not name the file", e.what());
  }
  return out;
}

std::string shifted(const Recorded& r, std::uint64_t pad) {
  std::string all;
  for (const std::string& item : r.items) {
    const std::size_t colon = item.find(':');
    const std::uint64_t offset = std::stoull(item.substr(1, colon - 1)) + pad;
    all += item[0] + std::to_string(offset) + item.substr(colon) + "\n";
  }
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  std::string_view doc(reinterpret_cast<const char*>(data) + 2, size - 2);
  // A byte-order mark is only skipped at byte 0, which the pad moves: not this target's subject.
  // All of them go: after one is skipped, a second fails the plain scan at byte 3 but the
  // padded one at once, with different events recorded before the failure.
  while (doc.substr(0, 3) == "\xEF\xBB\xBF") doc.remove_prefix(3);
  // Nor is a document that is itself gzip (the whole-file target reads those).
  if (doc.substr(0, 2) == "\x1F\x8B") return 0;
  const std::size_t cut =
      std::min<std::size_t>((data[0] | (data[1] << 8)) % (kChunk + 1), doc.size());
  const std::uint64_t pad = kChunk - cut;

  const Outcome plain = scan(fuzz::write_scratch("plain.json", doc));
  const std::string padded = std::string(pad, ' ') + std::string(doc);
  const Outcome split =
      scan(fuzz::write_scratch("split.json.gz", fuzz::gzip_member(padded)), kChunk);

  // Two chunks and the final progress call when the document crosses the boundary (a scan that
  // fails stops at the chunk where it failed).
  if (split.ok && doc.size() > cut && split.chunks < 3)
    fuzz::fail("the scanner did not read the 4 KiB chunks it was given", "");
  if (plain.ok != split.ok) fuzz::fail("a chunk boundary changes whether the file scans", doc);
  if (shifted(plain.recorded, pad) != shifted(split.recorded, 0))
    fuzz::fail("a chunk boundary changes the events or top-level values", doc);
  if (plain.ok && !plain.result.missing_array_end) {
    // A second JSON value after the first is not JSON: whatever it is, the scan must refuse it.
    for (std::string_view extra : {"\"x\"", " 1", "{}", "[]"}) {
      if (scan(fuzz::write_scratch("extra.json", std::string(doc) + std::string(extra))).ok)
        fuzz::fail("a value after the end of the JSON is accepted",
                   std::string(doc) + "|" + std::string(extra));
    }
  }
  if (plain.ok) {
    const auto& a = plain.result;
    const auto& b = split.result;
    if (a.layout != b.layout || a.missing_array_end != b.missing_array_end ||
        a.skipped_top_level != b.skipped_top_level || a.bytes + pad != b.bytes || !b.gzip)
      fuzz::fail("a chunk boundary changes the scan result", doc);
  }
  return 0;
}
