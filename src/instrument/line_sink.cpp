#include "instrument/line_sink.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "candle_graph/instrument.hpp"

namespace candle_graph::detail {

LineSink::LineSink(std::filesystem::path path) : path_(std::move(path)) {
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
  buffer_ = std::make_unique_for_overwrite<char[]>(kCapacity);
}

LineSink::~LineSink() {
  if (fd_ >= 0) ::close(fd_);
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
  write_out(line.data(), line.size());
}

void LineSink::flush() {
  // Emptied before writing, so that after a failed write the fixed buffer cannot overflow; the
  // sink is failed then and every later flush throws anyway.
  const std::size_t size = size_;
  size_ = 0;
  write_out(buffer_.get(), size);
}

void LineSink::fail(std::string what, int err) {
  failed_ = true;
  throw InstrumentError(path_, what + std::strerror(err) +
                                   "; the trace keeps the whole lines written before this error "
                                   "(check free disk space and the file system)");
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
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd_, data + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      // A short write (e.g. a full disk) may have left part of a line: cut back to the whole
      // lines written before this flush.
      if (done != 0 && ::ftruncate(fd_, static_cast<off_t>(file_bytes_)) == 0) done = 0;
      file_bytes_ += done;
      fail("cannot write the trace file: ", err);
    }
    done += static_cast<std::size_t>(n);
  }
  file_bytes_ += done;
}

void LineSink::close() {
  if (fd_ < 0) return;
  flush();
  if (::close(fd_) != 0) {
    fd_ = -1;
    fail("cannot close the trace file: ", errno);
  }
  fd_ = -1;
}

void LineSink::discard() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  std::error_code ec;
  std::filesystem::remove(path_, ec);
}

}  // namespace candle_graph::detail
