// libFuzzer target for the bundle manifest reader (bundle.json): any text must end in a manifest
// or findings, never an exception or a crash. A manifest accepted must be what the writer writes
// for it, list only safe and distinct paths, and come with no findings; a rejection must say why.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "bundle/bundle_manifest.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace candle_graph;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<bundle::Finding> findings;
  const auto manifest = bundle::parse_manifest(text, findings);
  if (!manifest) {
    if (findings.empty()) fuzz::fail("a manifest refused without a finding", text);
    for (const auto& f : findings)
      if (f.code.empty() || f.message.empty())
        fuzz::fail("a finding without a code or message", text);
    return 0;
  }
  if (!findings.empty()) fuzz::fail("a manifest accepted with findings", text);
  if (bundle::manifest_to_json(*manifest) != text)
    fuzz::fail("an accepted manifest is not in the form the writer writes", text);
  std::set<std::string> paths;
  for (const auto& f : manifest->files) {
    if (bundle::path_problem(f.path))
      fuzz::fail("an accepted manifest lists an unsafe path", f.path);
    if (!paths.insert(f.path).second) fuzz::fail("an accepted manifest lists a path twice", f.path);
  }
  return 0;
}
