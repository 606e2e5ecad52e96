// Shared helpers for the nsight tests: fixture paths and throw-away report directories.
#pragma once

#include <unistd.h>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "nsight/nsight_evidence.hpp"

namespace cg_nsight_test {

namespace fs = std::filesystem;

inline fs::path shared_nsys_dir() {
  return fs::path(CG_SHARED_FIXTURE_DIR) / "nsys";
}
inline fs::path own_fixture(const std::string& name) {
  return fs::path(CG_FIXTURE_DIR) / "nsight" / name;
}

// A fresh directory under the temp dir, removed at scope exit.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("cg_nsight_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }
  fs::path write(const std::string& name, const std::string& text) const {
    const fs::path p = path_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  // Copies one real fixture in alone, so a test sees exactly that file's evidence.
  void copy_shared(const std::string& name) const {
    fs::copy_file(shared_nsys_dir() / name, path_ / name);
  }

 private:
  fs::path path_;
};

inline candle_graph::nsight::NsightEvidence load_dir(const fs::path& dir,
                                                     std::vector<std::string> keys = {}) {
  return candle_graph::nsight::load_optional(dir, keys);
}

// Loads one real fixture file on its own.
inline candle_graph::nsight::NsightEvidence load_shared(const std::string& name,
                                                        std::vector<std::string> keys = {}) {
  TempDir dir;
  dir.copy_shared(name);
  return load_dir(dir.path(), std::move(keys));
}

}  // namespace cg_nsight_test
