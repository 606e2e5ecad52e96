#include "output/write_guard.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "format/bundle.hpp"

namespace candle_graph::output {
namespace fs = std::filesystem;

namespace {

bool holds_bundle_manifest(const fs::path& dir) {
  const fs::path manifest = dir / format::bundle::kManifestName;
  const int fd = ::open(manifest.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return false;
  struct stat st {};
  std::string head;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    head.resize(format::bundle::kSchemaProbeBytes);
    std::size_t have = 0;
    for (;;) {
      const ssize_t n = ::read(fd, head.data() + have, head.size() - have);
      if (n <= 0) break;
      have += static_cast<std::size_t>(n);
      if (have == head.size()) break;
    }
    head.resize(have);
  }
  ::close(fd);
  const std::string quoted = "\"" + std::string(format::bundle::kSchema) + "\"";
  return head.find(quoted) != std::string::npos;
}

}  // namespace

std::optional<fs::path> enclosing_bundle(const fs::path& target) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(target, ec), ec);
  if (ec) return std::nullopt;
  for (;;) {
    if (holds_bundle_manifest(p)) return p;
    const fs::path parent = p.parent_path();
    if (parent == p || parent.empty()) return std::nullopt;
    p = parent;
  }
}

void refuse_inside_bundle(const fs::path& target) {
  if (const auto bundle = enclosing_bundle(target))
    throw RefusedDestination(target.string(), 0,
                             "refusing to write inside the evidence bundle " + bundle->string() +
                                 " (bundles never change after publication; write elsewhere)");
}

}  // namespace candle_graph::output
