#include "bundle/bundle_staging.hpp"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <string_view>

#include "candle_graph/error.hpp"
#include "output/atomic_file.hpp"

namespace candle_graph::bundle {
namespace fs = std::filesystem;

namespace {

fs::path parent_of(const fs::path& destination) {
  return destination.parent_path().empty() ? fs::path(".") : destination.parent_path();
}

constexpr std::string_view kStagingMark = ".staging-";

// `.NAME.staging-`, NAME cut where the whole staging name (HOST-PID-XXXXXX after this) would
// pass 255 bytes.
std::string name_prefix(const fs::path& destination) {
  const std::size_t reserved = 1 + kStagingMark.size() + 32 + 1 + 10 + 1 + 6;
  return "." + output::sibling_name(destination, reserved) + std::string(kStagingMark);
}

// The creator's pid when `entry` is `HOST-PID-XXXXXX` with this host, else 0.
pid_t stale_candidate_pid(std::string_view rest, std::string_view host) {
  constexpr std::size_t kRandom = 6;  // mkdtemp's XXXXXX
  if (rest.size() < host.size() + 3 + kRandom || rest.substr(0, host.size()) != host ||
      rest[host.size()] != '-')
    return 0;
  rest.remove_prefix(host.size() + 1);
  const std::size_t dash = rest.size() - kRandom - 1;
  if (rest[dash] != '-') return 0;
  const std::string_view digits = rest.substr(0, dash);
  pid_t pid = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
  if (ec != std::errc() || end != digits.data() + digits.size() || pid <= 0) return 0;
  return pid;
}

}  // namespace

std::string staging_host() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "localhost";
  std::string host;
  for (const char* p = buf; *p != '\0' && host.size() < 32; ++p) {
    const char c = *p;
    const bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                       c == '.' || c == '_';
    host += plain ? c : '_';
  }
  return host;
}

std::string staging_prefix(const fs::path& destination) {
  return name_prefix(destination) + staging_host() + "-" + std::to_string(::getpid()) + "-";
}

void remove_stale_staging(const fs::path& destination,
                          const std::function<void(const fs::path&)>& removed) {
  const fs::path parent = parent_of(destination);
  const std::string prefix = name_prefix(destination);
  const std::string host = staging_host();
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const pid_t pid = stale_candidate_pid(std::string_view(name).substr(prefix.size()), host);
    if (pid == 0 || pid == ::getpid()) continue;
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
      continue;
    // kill(pid, 0) fails with ESRCH only when no such process exists (EPERM: it exists).
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;
    std::error_code remove_ec;
    fs::remove_all(it->path(), remove_ec);  // never follows symlinks inside
    if (!remove_ec && removed) removed(it->path());
  }
}

Staging::Staging(const fs::path& destination) {
  std::string tmpl = (parent_of(destination) / (staging_prefix(destination) + "XXXXXX")).string();
  int error = 0;
  on_interrupt_ = output::RemovedOnInterrupt::create(
      [&] { return ::mkdtemp(tmpl.data()) != nullptr ? fs::path(tmpl) : fs::path(); }, error);
  if (error != 0)
    throw Error(destination.string(), 0,
                std::string("cannot create the staging directory: ") + std::strerror(error));
  path_ = tmpl;
}

Staging::~Staging() {
  if (!path_.empty()) {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
}

}  // namespace candle_graph::bundle
