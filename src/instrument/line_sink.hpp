// The trace file of a session: a buffer of whole JSONL lines written to the file descriptor only
// at line boundaries (trace6.md §13.2 buffered writer; crash safety: a killed process leaves whole
// lines).
//
// A full buffer is handed to a writer thread and the recording thread goes on filling a spare
// one: the write() syscall (copying into the page cache, about a third of a record's cost) stays
// off the thread being profiled. flush() and close() are synchronous. A write error seen by the
// writer thread is thrown by the next append that hands over a buffer, or by flush()/close().
// Not synchronised: the session calls it under its mutex. A sink belongs to the process that
// opened it: after fork() the child writes synchronously (it has no writer thread).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

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
  ~LineSink();  // waits for the writer thread, closes without writing the buffer (flush first)

  // Appends one whole line (ending in '\n') and writes out when over the threshold.
  //
  // Crash safety: when SIGKILL interrupts a buffered write(), Linux stops it only at a page
  // (folio) boundary of the file offset. So no line may cross a 4 KiB boundary: a line that
  // would is preceded by a whitespace-only padding line, which the reader skips (trace6.md §4.1),
  // and every possible cut point is then a line boundary. Lines longer than 4 KiB cannot be
  // protected this way (they are written unpadded).
  void append(std::string_view line) {
    const std::size_t used = static_cast<std::size_t>((offset_ + size_) % kPage);
    if (used != 0 && line.size() > kPage - used && line.size() <= kPage) pad(kPage - used);
    if (line.size() > kLineRoom) [[unlikely]] {
      append_long(line);
      return;
    }
    // A fixed buffer with room for one more line past the threshold: no capacity check and no
    // std::string bookkeeping per line.
    copy_line(buffer_.get() + size_, line.data(), line.size());
    size_ += line.size();
    if (size_ >= kFlushThreshold) hand_off();
  }
  // Writes everything appended so far to the file before returning.
  void flush();
  // Flushes, then writes `bytes` over the start of the file (the caller keeps the length of what
  // it replaces, so every line keeps its offset). Throws InstrumentError.
  void overwrite_start(std::string_view bytes);
  // Flushes and closes; later appends throw.
  void close();
  // Removes the file (used when the session could not even write its first lines).
  void discard() noexcept;

  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  // Lines up to this size (plus a page of padding) always fit after a buffer below the threshold.
  static constexpr std::size_t kLineRoom = 60 * 1024;
  static constexpr std::size_t kCapacity = kFlushThreshold + kPage + kLineRoom;

  // Most lines are 50-300 bytes: 16-byte moves inline beat a call into the library memcpy,
  // whose size dispatch is a measurable part of a ~100 ns record. The last move is the line's
  // final 16 bytes (overlapping the previous one), so nothing past either end is touched.
  static void copy_line(char* dst, const char* src, std::size_t n) noexcept {
    if (n < 16 || n > 512) [[unlikely]] {
      std::memcpy(dst, src, n);
      return;
    }
    auto move16 = [](char* d, const char* s) {
      char chunk[16];
      std::memcpy(chunk, s, 16);
      std::memcpy(d, chunk, 16);
    };
    for (std::size_t i = 0; i + 16 < n; i += 16) move16(dst + i, src + i);
    move16(dst + n - 16, src + n - 16);
  }
  void pad(std::size_t bytes);
  void append_long(std::string_view line);  // lines > kLineRoom: written out directly
  void hand_off();                          // the full buffer to the writer thread
  void wait_for_writer();                   // until no buffer is in flight; throws its error
  bool has_writer() const noexcept;         // a writer thread of this process exists
  bool start_writer();                      // has_writer(), starting the thread if need be
  void stop_writer() noexcept;
  void writer_main();
  void write_out(const char* data, std::size_t size);  // on the calling thread; throws
  // Writes the whole range or returns what failed (and truncates back to whole lines).
  std::string write_all(const char* data, std::size_t size);
  [[noreturn]] void fail(std::string message);
  std::filesystem::path path_;
  // The two buffers are mapped pages, not malloc memory (line_sink.cpp, map_buffer).
  static char* map_buffer(const std::filesystem::path& path);
  struct Unmap {
    void operator()(char* p) const noexcept;
  };
  std::unique_ptr<char[], Unmap> buffer_;  // being filled
  std::unique_ptr<char[], Unmap> spare_;   // in flight at the writer thread, or free (mapped
                                           // with the writer thread)
  std::size_t size_ = 0;                   // bytes buffered, not yet handed over or written
  std::uint64_t offset_ = 0;      // file offset of buffer_[0] (bytes handed over or written)
  std::uint64_t file_bytes_ = 0;  // bytes written; only the thread writing touches it
  int fd_ = -1;
  bool failed_ = false;
  int owner_pid_ = 0;
  bool writer_unavailable_ = false;  // starting the writer failed once: write synchronously

  std::mutex writer_mu_;  // guards the fields below
  std::condition_variable wake_writer_;
  std::condition_variable writer_idle_;
  const char* job_ = nullptr;
  std::size_t job_size_ = 0;
  bool busy_ = false;  // job_ is being written
  bool stop_ = false;
  std::string writer_error_;  // the writer thread's failure, not yet thrown
  std::thread writer_;
};

}  // namespace candle_graph::detail
