// The trace file of a session: a buffer of whole JSONL lines written to the file descriptor only
// at line boundaries (§13.2 buffered writer; crash safety: a killed process leaves whole lines).
// Not synchronised: the session calls it under its mutex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace candle_graph::detail {

class LineSink {
 public:
  // Bytes buffered before they are written out; large enough that the write() syscall is
  // amortised over thousands of events, small enough to bound what a crash loses.
  static constexpr std::size_t kFlushThreshold = 256 * 1024;
  static constexpr std::size_t kPage = 4096;

  // Creates parent directories and creates/truncates the file. Throws InstrumentError.
  explicit LineSink(std::filesystem::path path);
  LineSink(const LineSink&) = delete;
  LineSink& operator=(const LineSink&) = delete;
  ~LineSink();  // closes the descriptor without writing (the session flushes explicitly)

  // Appends one whole line (ending in '\n') and writes out when over the threshold.
  //
  // Crash safety: when SIGKILL interrupts a buffered write(), Linux stops it only at a page
  // (folio) boundary of the file offset. So no line may cross a 4 KiB boundary: a line that
  // would is preceded by a whitespace-only padding line, which the reader skips (§4.1), and
  // every possible cut point is then a line boundary. Lines longer than 4 KiB cannot be
  // protected this way (they are written unpadded).
  void append(std::string_view line) {
    const std::size_t used = static_cast<std::size_t>((file_bytes_ + size_) % kPage);
    if (used != 0 && line.size() > kPage - used && line.size() <= kPage) pad(kPage - used);
    if (line.size() > kLineRoom) [[unlikely]] {
      append_long(line);
      return;
    }
    // A fixed buffer with room for one more line past the threshold: no capacity check and no
    // std::string bookkeeping per line.
    std::memcpy(buffer_.get() + size_, line.data(), line.size());
    size_ += line.size();
    if (size_ >= kFlushThreshold) flush();
  }
  void flush();
  // Flushes and closes; later appends throw.
  void close();
  // Removes the file (used when the session could not even write its first lines).
  void discard() noexcept;

  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  // Lines up to this size (plus a page of padding) always fit after a buffer below the threshold.
  static constexpr std::size_t kLineRoom = 60 * 1024;
  static constexpr std::size_t kCapacity = kFlushThreshold + kPage + kLineRoom;

  void pad(std::size_t bytes);
  void append_long(std::string_view line);  // lines > kLineRoom: written out directly
  void write_out(const char* data, std::size_t size);
  [[noreturn]] void fail(std::string what, int err);
  std::filesystem::path path_;
  std::unique_ptr<char[]> buffer_;
  std::size_t size_ = 0;          // bytes buffered, not yet written
  std::uint64_t file_bytes_ = 0;  // bytes already written to the file
  int fd_ = -1;
  bool failed_ = false;
};

}  // namespace candle_graph::detail
