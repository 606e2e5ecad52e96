// Shared helpers for the nsight tests: fixture paths and throw-away report directories.
#pragma once

#include <unistd.h>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>
#include "support/temp_dir.hpp"

#include "import/nsight/nsight_evidence.hpp"

namespace cg_nsight_test {

namespace fs = std::filesystem;

inline fs::path shared_nsys_dir() {
  return fs::path(CG_SHARED_FIXTURE_DIR) / "nsys";
}
inline fs::path own_fixture(const std::string& name) {
  return fs::path(CG_FIXTURE_DIR) / "nsight" / name;
}

// The shared temp dir, plus copying real fixtures in.
class TempDir : public candle_graph::testing::TempDir {
 public:
  // Copies one real fixture in alone, so a test sees exactly that file's evidence.
  void copy_shared(const std::string& name) const {
    fs::copy_file(shared_nsys_dir() / name, path() / name);
  }
};

inline candle_graph::import::nsight::NsightEvidence load_dir(const fs::path& dir,
                                                             std::vector<std::string> keys = {}) {
  return candle_graph::import::nsight::load_optional(dir, keys);
}

// Loads one real fixture file on its own.
inline candle_graph::import::nsight::NsightEvidence load_shared(
    const std::string& name, std::vector<std::string> keys = {}) {
  TempDir dir;
  dir.copy_shared(name);
  return load_dir(dir.path(), std::move(keys));
}

}  // namespace cg_nsight_test
