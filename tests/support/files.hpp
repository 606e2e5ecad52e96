// Reading and writing whole files, and where the fixtures are: shared by every test suite.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

namespace candle_graph::testing {

namespace fs = std::filesystem;

// The whole file, or "" when it cannot be read (tests compare it with what they expect).
inline std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline bool write_file(const fs::path& p, std::string_view bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return out.good();
}

// Whether the file system under `dir` takes O_DIRECT at all, asked of open(2) itself (so that a
// test of direct writes does not take the code under test's word for it).
inline bool takes_direct_writes(const fs::path& dir) {
  const fs::path probe = dir / ".direct-probe";
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_DIRECT, 0600);
  if (fd < 0) return false;
  ::close(fd);
  fs::remove(probe);
  return true;
}

// tests/fixtures/<name>: inputs written for these tests.
inline fs::path fixture(std::string_view name) {
  return fs::path(CG_FIXTURE_DIR) / name;
}

// ../shared/fixtures/<name>: real inputs nobody here wrote (each folder has a SOURCES.md).
inline fs::path shared_fixture(std::string_view name) {
  return fs::path(CG_SHARED_FIXTURE_DIR) / name;
}

}  // namespace candle_graph::testing
