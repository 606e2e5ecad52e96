#include "instrument/line_sink.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
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
// batch 64 in integrations/torch/bench, none without a session.
//
// A finished session's buffers are kept for the next session of the process (up to
// kSpareBuffers of them) instead of being unmapped: a program that captures one update in many
// (the LibTorch capture) then neither maps, faults in nor unmaps 380 KiB per capture. munmap
// flushes the TLB of every core running the process, and the pages faulted in again cost ~1 µs
// each; both landed right around the captured update.
namespace {

constexpr int kSpareBuffers = 2;
std::atomic<char*> g_spare_buffers[kSpareBuffers] = {};

}  // namespace

char* LineSink::map_buffer(const std::filesystem::path& path) {
  for (std::atomic<char*>& slot : g_spare_buffers)
    if (char* kept = slot.exchange(nullptr, std::memory_order_acquire)) return kept;
  void* p = ::mmap(nullptr, kCapacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    throw InstrumentError(path,
                          std::string("cannot map the trace buffer: ") + std::strerror(errno));
  return static_cast<char*>(p);
}

void LineSink::Unmap::operator()(char* p) const noexcept {
  if (p == nullptr) return;
  for (std::atomic<char*>& slot : g_spare_buffers) {
    char* empty = nullptr;
    if (slot.compare_exchange_strong(empty, p, std::memory_order_release)) return;
  }
  ::munmap(p, kCapacity);
}

LineSink::LineSink(std::filesystem::path path) : path_(std::move(path)) {
  // The buffer first: if mapping fails, no file descriptor is left open and no file created.
  // The second buffer and the writer thread wait for the first hand-off (hand_off): a trace
  // smaller than kFlushThreshold never needs them, and starting a thread (clone, an 8 MiB stack
  // released with madvise at its exit) is kernel work right before the code being traced.
  buffer_.reset(map_buffer(path_));
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
}

bool LineSink::start_writer() {
  if (writer_.joinable()) return has_writer();
  if (writer_unavailable_ || static_cast<int>(::getpid()) != owner_pid_) return false;
  try {
    if (!spare_) spare_.reset(map_buffer(path_));
    writer_ = std::thread([this] { writer_main(); });
  } catch (...) {
    // No memory or thread to spare (e.g. a thread limit): every write happens on the recording
    // thread.
    writer_unavailable_ = true;
    return false;
  }
  return true;
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
  // Named so that top/gdb (and tests) can tell it from the program's own threads.
  ::pthread_setname_np(::pthread_self(), "cg-trace-write");
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
  if (failed_ || fd_ < 0 || !start_writer()) {
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

void LineSink::overwrite_start(std::string_view bytes) {
  flush();
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n =
        ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      fail(std::string("cannot rewrite the meta line of the trace file: ") + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
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
