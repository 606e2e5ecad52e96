// A fresh, unique directory under the system temp dir, removed with everything in it when the
// object goes out of scope. Shared by every test suite that writes files.
#pragma once

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace candle_graph::testing {

class TempDir {
 public:
  explicit TempDir(std::string_view prefix = "cg-test") {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed: " + tmpl);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(std::string_view name) const { return path_ / name; }

  // Writes `text` to a file in the directory and returns its path.
  std::filesystem::path write(std::string_view name, std::string_view text) const {
    const std::filesystem::path p = path_ / name;
    std::ofstream(p, std::ios::binary)
        .write(text.data(), static_cast<std::streamsize>(text.size()));
    return p;
  }

  // Sorted names of the entries in the directory (to spot leftover temporary files).
  std::vector<std::string> entries() const { return entries_of(path_); }
  // The same for any directory (a subdirectory of this one).
  static std::vector<std::string> entries_of(const std::filesystem::path& dir) {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir))
      out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace candle_graph::testing
