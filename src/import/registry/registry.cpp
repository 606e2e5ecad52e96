// The one place where importers are registered: a new input format is one Importer and one line
// in kImporters (docs/architecture.md, "Adding an input format").
#include <zlib.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "candle_graph/error.hpp"
#include "candle_graph/import.hpp"
#include "import/chrome/chrome_importer.hpp"
#include "import/pytorch/pytorch_importer.hpp"
#include "import/trace6/trace6_importer.hpp"

namespace candle_graph {
namespace {

const import::trace6::Trace6Importer kTrace6;
const import::chrome::ChromeExportImporter kChromeExport;
const import::pytorch::PytorchImporter kPytorch;

// Strictest first: the PyTorch importer takes any JSON object or array.
const std::array<const Importer*, 3> kImporters = {&kTrace6, &kChromeExport, &kPytorch};

struct GzCloser {
  void operator()(gzFile f) const noexcept { gzclose(f); }
};

bool is_gzip(const std::filesystem::path& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) {
    throw Error(ErrorKind::io, path.string(), 0,
                std::string("cannot open: ") + std::strerror(errno));
  }
  unsigned char magic[2] = {0, 0};
  return std::fread(magic, 1, 2, f.get()) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

}  // namespace

std::span<const Importer* const> importers() {
  return kImporters;
}

InputHead read_input_head(const std::filesystem::path& path, std::string& storage) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw Error(ErrorKind::io, path.string(), 0, "cannot open: no such file");
  if (std::filesystem::is_directory(path, ec))
    throw Error(ErrorKind::io, path.string(), 0, "cannot open: a directory, not a trace file");
  // A pipe is refused before it is opened (opening one without a writer would block); the usual
  // one is `zcat trace.json.gz | …`, which the hint answers.
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error(ErrorKind::io, path.string(), 0,
                "cannot open: not a regular file (a pipe, socket or device); give the trace file "
                "itself: gzip-compressed traces are read as they are");
  InputHead head;
  head.path = path;
  head.gzip = is_gzip(path);
  storage.assign(kInputHeadBytes, '\0');
  std::unique_ptr<gzFile_s, GzCloser> f(gzopen(path.c_str(), "rb"));
  if (!f) throw Error(ErrorKind::io, path.string(), 0, "cannot open for reading");
  // A truncated or corrupt stream still gives the bytes before the damage; the importer that
  // takes the file reports the damage itself, with its offset.
  const int n = gzread(f.get(), storage.data(), static_cast<unsigned>(storage.size()));
  storage.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  head.bytes = storage;
  return head;
}

const Importer& trace6_importer() {
  return kTrace6;
}

const Importer* find_importer(const InputHead& head) {
  for (const Importer* importer : kImporters) {
    if (importer->recognizes(head)) return importer;
  }
  return nullptr;
}

ImportedTrace import_trace(const std::filesystem::path& path, const ImportOptions& options) {
  std::string storage;
  const InputHead head = read_input_head(path, storage);
  const Importer* importer = find_importer(head);
  // A file no importer recognises goes to the trace/6 reader, whose errors name the first line
  // that is wrong: the most precise words for a damaged line-oriented file.
  return (importer ? importer : &kTrace6)->read(path, options);
}

}  // namespace candle_graph
