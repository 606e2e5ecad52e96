// The staging directory of a bundle being published, and the clean-up of staging directories
// that a killed publication left behind.
//
// A staging directory is `.NAME.staging-HOST-PID-XXXXXX` next to the bundle NAME (NAME cut short
// where the whole would pass 255 bytes: output::sibling_name). Any failure
// the process sees removes it, but SIGKILL or a power cut cannot: the next publication of NAME
// from the same host then removes the ones whose process no longer exists. Staging directories
// of another host (a shared file system), of a live process, of another user, or not in this
// form are never touched.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include "output/interrupt_cleanup.hpp"

namespace candle_graph::bundle {

// This host's name as it appears in staging names ([A-Za-z0-9._] only, at most 32 characters).
std::string staging_host();

// `.NAME.staging-HOST-PID-` for this process: the prefix mkdtemp completes.
std::string staging_prefix(const std::filesystem::path& destination);

// Removes the stale staging directories of `destination` (see above) and calls `removed` with
// each one it removed. Never throws: a directory it cannot remove is left as it is.
void remove_stale_staging(const std::filesystem::path& destination,
                          const std::function<void(const std::filesystem::path&)>& removed);

// A fresh staging directory (mode 0700, from mkdtemp), removed with its content on destruction
// unless released.
class Staging {
 public:
  explicit Staging(const std::filesystem::path& destination);
  ~Staging();
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;
  const std::filesystem::path& path() const { return path_; }
  // The directory was renamed into place: nothing to remove any more.
  void release() {
    path_.clear();
    on_interrupt_.reset();
  }

 private:
  std::filesystem::path path_;
  output::RemovedOnInterrupt on_interrupt_;
};

}  // namespace candle_graph::bundle
