// Shared helpers of the instrumentation tests: a scratch directory per test and file reading.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/files.hpp"

namespace candle_graph::testing_support {

// A fresh directory under the system temp dir, removed when the test ends.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "cg-instrument-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

using candle_graph::testing::read_file;

inline std::vector<std::string> read_lines(const std::filesystem::path& p) {
  std::vector<std::string> lines;
  std::istringstream in(read_file(p));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace candle_graph::testing_support
