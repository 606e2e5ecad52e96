// Safe output files: content goes to a temporary sibling that is renamed over the target only
// when complete, so a crash or an error never leaves a partial file. Parent directories are
// created. Errors name the path.
#pragma once

#include <cstdio>
#include <filesystem>
#include <string_view>

namespace candle_graph::output {

class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path target);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();  // discards the temporary file unless commit() succeeded

  void write(std::string_view bytes);
  // Flush, fsync-free close, rename over the target.
  void commit();

  const std::filesystem::path& target() const noexcept { return target_; }

 private:
  std::filesystem::path target_;
  std::filesystem::path temp_;
  std::FILE* file_ = nullptr;
};

void write_file_atomic(const std::filesystem::path& target, std::string_view bytes);

// True when both paths name the same existing file (so writing one would destroy the other).
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) noexcept;

}  // namespace candle_graph::output
