// The trace file of a session: a buffer of whole JSONL lines written to the file descriptor only
// at line boundaries (§13.2 buffered writer; crash safety: a killed process leaves whole lines).
// Not synchronised: the session calls it under its mutex.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace candle_graph::detail {

class LineSink {
 public:
  // Bytes buffered before they are written out; large enough that the write() syscall is
  // amortised over thousands of events, small enough to bound what a crash loses.
  static constexpr std::size_t kFlushThreshold = 256 * 1024;

  // Creates parent directories and creates/truncates the file. Throws InstrumentError.
  explicit LineSink(std::filesystem::path path);
  LineSink(const LineSink&) = delete;
  LineSink& operator=(const LineSink&) = delete;
  ~LineSink();  // closes the descriptor without writing (the session flushes explicitly)

  // The buffer lines are appended to; it only ever holds whole lines between calls.
  std::string& buffer() noexcept { return buffer_; }
  // Appends whole lines (each ending in '\n') and writes out when over the threshold.
  void append(std::string_view lines) {
    buffer_.append(lines);
    written();
  }
  // Call after appending directly to buffer(): writes out when over the threshold.
  void written() {
    if (buffer_.size() >= kFlushThreshold) flush();
  }
  void flush();
  // Flushes and closes; later appends throw.
  void close();
  // Removes the file (used when the session could not even write its first lines).
  void discard() noexcept;

  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  [[noreturn]] void fail(std::string what, int err);
  std::filesystem::path path_;
  std::string buffer_;
  int fd_ = -1;
  bool failed_ = false;
};

}  // namespace candle_graph::detail
