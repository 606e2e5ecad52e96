#include "import/chrome/chrome_importer.hpp"

#include "format/chrome.hpp"

namespace candle_graph::import::chrome {
namespace {

// Skips JSON whitespace from `at`; returns the position of the next other byte (or the end).
std::size_t skip_space(std::string_view s, std::size_t at) {
  while (at < s.size() && (s[at] == ' ' || s[at] == '\t' || s[at] == '\n' || s[at] == '\r')) ++at;
  return at;
}

// Consumes `token` at `at` (after whitespace); npos when it is not there.
std::size_t expect(std::string_view s, std::size_t at, std::string_view token) {
  at = skip_space(s, at);
  return s.substr(at, token.size()) == token ? at + token.size() : std::string_view::npos;
}

}  // namespace

bool ChromeExportImporter::recognizes(const InputHead& head) const {
  const std::string_view s = head.bytes;
  std::size_t at = 0;
  for (std::string_view token : {"{", "\"traceEvents\"", ":", "["}) {
    at = expect(s, at, token);
    if (at == std::string_view::npos) return false;
  }
  // The export writes spans first: the root span's slice, with its cat and its args' span_id.
  const std::string cat = "\"cat\":\"" + std::string(format::chrome::kSpanCategory) + "\"";
  const std::size_t slice = s.find(cat, at);
  return slice != std::string_view::npos && s.find("\"span_id\":", slice) != std::string_view::npos;
}

}  // namespace candle_graph::import::chrome
