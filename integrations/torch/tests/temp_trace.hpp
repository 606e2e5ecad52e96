// Where the capture tests write their traces: one directory per test process, removed at exit.
#pragma once

#include <filesystem>
#include <string>

#include "support/temp_dir.hpp"

namespace candle_graph::torch_tests {

inline std::filesystem::path temp_trace(const std::string& name) {
  static const candle_graph::testing::TempDir dir("cg_torch_capture_tests");
  return dir / (name + ".jsonl");
}

}  // namespace candle_graph::torch_tests
