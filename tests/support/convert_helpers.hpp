// Shared by the convert tests: run the converter, read the result back through the library's own
// trace reader and health analysis (the same code `validate` uses).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "candle_graph/health.hpp"
#include "candle_graph/trace.hpp"
#include "import/registry/convert.hpp"
#include "support/files.hpp"
#include "support/temp_dir.hpp"

namespace cgimport {

namespace fs = std::filesystem;
using candle_graph::testing::TempDir;

inline fs::path shared_fixture(std::string_view name) {
  return fs::path(CG_SHARED_FIXTURE_DIR) / "pytorch-chrome-trace" / name;
}

inline std::string slurp(const fs::path& p) {
  return candle_graph::testing::read_file(p);
}

struct Converted {
  candle_graph::import::ConvertResult result;
  candle_graph::TraceDocument doc;
  candle_graph::TraceHealth health;
  std::map<std::string, std::string> tags;
  std::size_t device_ops = 0;  // kernels, memcpys, memsets and syncs (doc.device_ops())

  std::string tag(const std::string& key) const {
    const auto it = tags.find(key);
    return it == tags.end() ? std::string() : it->second;
  }
};

inline Converted convert_and_read(const fs::path& input, const fs::path& output,
                                  const candle_graph::ImportOptions& options = {}) {
  Converted c;
  c.result = candle_graph::import::convert_pytorch_trace(input, output, options);
  c.doc = candle_graph::parse_trace(output);
  c.health = candle_graph::analyze_health(c.doc);
  for (const candle_graph::Tag& t : c.doc.run().tags)
    c.tags[std::string(t.key)] = std::string(t.value);
  c.device_ops = c.doc.device_ops().size();
  return c;
}

inline std::string error_codes(const candle_graph::TraceHealth& h) {
  std::string s;
  for (const auto& i : h.issues) {
    if (i.severity == candle_graph::HealthSeverity::error)
      s += std::string(i.code) + ": " + std::string(i.message) + "\n";
  }
  return s;
}

// Converts `text` (written to `name` in `dir`) and returns the error it must fail with: the error
// names the input, and no output file is left behind.
inline std::string convert_error(const TempDir& dir, std::string_view name, std::string_view text) {
  const fs::path in = dir.write(name, text);
  try {
    candle_graph::import::convert_pytorch_trace(in, dir / "out.jsonl");
  } catch (const candle_graph::Error& e) {
    EXPECT_FALSE(fs::exists(dir / "out.jsonl")) << "a failed conversion left an output file";
    EXPECT_EQ(e.path(), in.string());
    return e.what();
  }
  ADD_FAILURE() << name << " converted without an error";
  return {};
}

inline bool has(const std::string& s, std::string_view part) {
  return s.find(part) != std::string::npos;
}

}  // namespace cgimport
