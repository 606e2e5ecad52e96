#include "import/trace6/trace6_importer.hpp"

#include "candle_graph/error.hpp"

namespace candle_graph::import::trace6 {

bool Trace6Importer::recognizes(const InputHead& head) const {
  std::string_view s = head.bytes;
  if (s.substr(0, 3) == "\xEF\xBB\xBF") s.remove_prefix(3);  // a UTF-8 BOM (compatibility T4)
  for (;;) {
    const std::size_t nl = s.find('\n');
    std::string_view line = s.substr(0, nl);
    const std::size_t first = line.find_first_not_of(" \t\r\f\v");
    if (first != std::string_view::npos) {
      line.remove_prefix(first);
      if (line.empty() || line.front() != '{') return false;
      const std::size_t key = line.find_first_not_of(" \t\r\f\v", 1);
      return (key != std::string_view::npos && line.substr(key, 6) == "\"kind\"") ||
             line.find("\"schema\":\"candle-graph/trace/") != std::string_view::npos;
    }
    if (nl == std::string_view::npos) return false;  // only blank lines in the head
    s.remove_prefix(nl + 1);
  }
}

ImportedTrace Trace6Importer::read(const std::filesystem::path& path,
                                   const ImportOptions& options) const {
  if (options.step || options.all_steps)
    throw Error(ErrorKind::usage, path.string(), 0,
                "--step picks a ProfilerStep of a PyTorch trace; a trace/6 trace has one measured "
                "region");
  ReadOptions read;
  read.progress = options.progress;
  read.threads = options.threads;
  ImportedTrace t{parse_trace(path, read), {}};
  t.report.format = "trace6";
  t.report.source_events = t.document.event_count();
  return t;
}

}  // namespace candle_graph::import::trace6
