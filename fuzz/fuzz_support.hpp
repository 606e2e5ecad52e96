// What the libFuzzer targets share: the importers read files, not buffers, so each input is
// written to a private temporary directory (one per fuzzer process, removed at exit); gzip
// members are built with zlib so the importers' gzip paths see valid streams, not only the
// fuzzer's rare lucky guesses; and a finding aborts with the input's context on stderr.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include "candle_graph/error.hpp"

namespace candle_graph::fuzz {

[[noreturn]] inline void fail(const char* what, std::string_view detail) {
  std::fprintf(stderr, "fuzz finding: %s\n%.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

// A number that must hold against another (a part within its whole, a sum equal to its total).
inline void law(bool holds, const char* what, std::uint64_t a, std::uint64_t b) {
  if (!holds) fail(what, std::to_string(a) + " against " + std::to_string(b));
}

// The process's scratch directory under TMPDIR (or /tmp), created on first use.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "cg-fuzz-XXXXXX").string();
    if (!mkdtemp(pattern.data())) fail("cannot create the scratch directory", pattern);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch_dir(), ec);
    });
    return std::filesystem::path(pattern);
  }();
  return dir;
}

// Writes `bytes` to scratch_dir()/name (replacing it) and returns the path.
inline std::filesystem::path write_scratch(const std::string& name, std::string_view bytes) {
  const std::filesystem::path path = scratch_dir() / name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) fail("cannot write the scratch file", path.string());
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (std::fclose(f) != 0 || !ok) fail("cannot write the scratch file", path.string());
  return path;
}

// One complete gzip member holding `bytes` (deflate level 1: the inputs are small and many).
inline std::string gzip_member(std::string_view bytes, int level = 1) {
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    fail("deflateInit2 failed", "");
  std::string out(deflateBound(&z, static_cast<uLong>(bytes.size())) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) fail("deflate did not finish", "");
  return out;
}

// Whether two reads of the same bytes failed alike: the same kind, line and message (the file's
// name aside, which a pipe or a second copy changes).
inline bool same_error(const Error& a, const Error& b) {
  return a.kind() == b.kind() && a.line() == b.line() && a.message() == b.message();
}

// Reads the leading control byte of an input: the rest is the document.
struct Split {
  std::uint8_t control = 0;
  std::string_view rest;
};
inline Split split_control(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return {};
  return {data[0], std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1)};
}

}  // namespace candle_graph::fuzz
