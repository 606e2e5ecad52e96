#include "instrument/line_sink.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "candle_graph/instrument.hpp"

namespace candle_graph::detail {

// The buffers are mapped directly instead of taken from malloc: two 320 KiB blocks live for the
// whole session would otherwise sit in the program's heap (glibc serves them from the heap once
// its dynamic mmap threshold has grown past them), and the program's own large blocks allocated
// while the session is open (e.g. LibTorch activations during a captured update) then extend the
// heap into fresh pages instead of reusing its memory: ~64-96 page faults per captured update at
// batch 64 in integrations/torch/bench, none without a session. Pages are faulted in on first
// write, as with malloc.
char* LineSink::map_buffer(const std::filesystem::path& path) {
  void* p = ::mmap(nullptr, kCapacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    throw InstrumentError(path,
                          std::string("cannot map the trace buffer: ") + std::strerror(errno));
  return static_cast<char*>(p);
}

void LineSink::Unmap::operator()(char* p) const noexcept {
  if (p != nullptr) ::munmap(p, kCapacity);
}

LineSink::LineSink(std::filesystem::path path) : path_(std::move(path)) {
  // The buffers first: if mapping fails, no file descriptor is left open and no file created.
  buffer_.reset(map_buffer(path_));
  spare_.reset(map_buffer(path_));
  const std::filesystem::path parent = path_.parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec)
      throw InstrumentError(path_, "cannot create the directory " + parent.string() + ": " +
                                       ec.message() + "; choose a writable trace path");
  }
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw InstrumentError(path_, std::string("cannot create the trace file: ") +
                                     std::strerror(errno) + "; choose a writable trace path");
  owner_pid_ = static_cast<int>(::getpid());
  try {
    writer_ = std::thread([this] { writer_main(); });
  } catch (const std::system_error&) {
    // No thread to spare (e.g. a thread limit): every write happens on the recording thread.
  }
}

LineSink::~LineSink() {
  stop_writer();
  if (fd_ >= 0) ::close(fd_);
}

bool LineSink::has_writer() const noexcept {
  // After fork() the child has the thread object but not the thread.
  return writer_.joinable() && static_cast<int>(::getpid()) == owner_pid_;
}

void LineSink::stop_writer() noexcept {
  if (!writer_.joinable()) return;
  if (static_cast<int>(::getpid()) != owner_pid_) {
    writer_.detach();  // a forked child: the thread lives (or lived) in the parent only
    return;
  }
  {
    std::lock_guard lock(writer_mu_);
    stop_ = true;
  }
  wake_writer_.notify_one();
  writer_.join();  // after the buffer in flight, if any, is written
}

void LineSink::writer_main() {
  std::unique_lock lock(writer_mu_);
  for (;;) {
    wake_writer_.wait(lock, [this] { return busy_ || stop_; });
    if (!busy_) return;  // stopping, nothing in flight
    lock.unlock();
    std::string error = write_all(job_, job_size_);
    lock.lock();
    if (!error.empty() && writer_error_.empty()) writer_error_ = std::move(error);
    busy_ = false;
    writer_idle_.notify_all();
  }
}

void LineSink::wait_for_writer() {
  std::unique_lock lock(writer_mu_);
  writer_idle_.wait(lock, [this] { return !busy_; });
  if (!writer_error_.empty()) {
    std::string message = std::move(writer_error_);
    writer_error_.clear();
    lock.unlock();
    fail(std::move(message));
  }
}

void LineSink::hand_off() {
  if (failed_ || fd_ < 0 || !has_writer()) {
    flush();  // synchronous path (and its errors)
    return;
  }
  // Waits only when the writer is still busy with the previous buffer: the page cache then
  // absorbs data slower than the program records it, and the recording thread takes the pace.
  wait_for_writer();
  std::swap(buffer_, spare_);
  {
    std::lock_guard lock(writer_mu_);
    job_ = spare_.get();
    job_size_ = size_;
    busy_ = true;
  }
  wake_writer_.notify_one();
  offset_ += size_;
  size_ = 0;
}

void LineSink::pad(std::size_t bytes) {
  // bytes < kPage and size_ < kFlushThreshold here, so the padding fits in the slack.
  std::memset(buffer_.get() + size_, ' ', bytes - 1);
  buffer_[size_ + bytes - 1] = '\n';
  size_ += bytes;
}

void LineSink::append_long(std::string_view line) {
  // Rare (a multi-KiB name): written out at once, after the buffered lines, as one whole line.
  flush();
  offset_ += line.size();
  write_out(line.data(), line.size());
}

void LineSink::flush() {
  if (has_writer()) wait_for_writer();
  // Emptied before writing, so that after a failed write the fixed buffer cannot overflow; the
  // sink is failed then and every later flush throws anyway.
  const std::size_t size = size_;
  size_ = 0;
  offset_ += size;
  write_out(buffer_.get(), size);
}

void LineSink::fail(std::string message) {
  failed_ = true;
  throw InstrumentError(path_, std::move(message));
}

std::string LineSink::write_all(const char* data, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd_, data + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      // A short write (e.g. a full disk) may have left part of a line: cut back to the whole
      // lines written before this batch.
      if (done != 0 && ::ftruncate(fd_, static_cast<off_t>(file_bytes_)) == 0) done = 0;
      file_bytes_ += done;
      return std::string("cannot write the trace file: ") + std::strerror(err) +
             "; the trace keeps the whole lines written before this error (check free disk "
             "space and the file system)";
    }
    done += static_cast<std::size_t>(n);
  }
  file_bytes_ += done;
  return {};
}

void LineSink::write_out(const char* data, std::size_t size) {
  if (failed_)
    throw InstrumentError(path_,
                          "an earlier write to the trace failed; open a new TraceSession to "
                          "capture again");
  if (fd_ < 0) {
    if (size == 0) return;
    throw InstrumentError(path_, "the trace file is closed; record events before finish()");
  }
  if (std::string error = write_all(data, size); !error.empty()) fail(std::move(error));
}

void LineSink::close() {
  if (fd_ < 0) return;
  flush();
  stop_writer();
  if (::close(fd_) != 0) {
    fd_ = -1;
    fail(std::string("cannot close the trace file: ") + std::strerror(errno) +
         "; the trace keeps the whole lines written before this error (check free disk space "
         "and the file system)");
  }
  fd_ = -1;
}

void LineSink::discard() noexcept {
  stop_writer();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  std::error_code ec;
  std::filesystem::remove(path_, ec);
}

}  // namespace candle_graph::detail
