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
  // Headroom so that appending one more line after reaching the threshold never reallocates.
  buffer_.reserve(kFlushThreshold + 64 * 1024);
}

LineSink::~LineSink() {
  if (fd_ >= 0) ::close(fd_);
}

void LineSink::pad(std::size_t bytes) {
  buffer_.append(bytes - 1, ' ');
  buffer_.push_back('\n');
}

void LineSink::fail(std::string what, int err) {
  failed_ = true;
  throw InstrumentError(path_, what + std::strerror(err) +
                                   "; the trace keeps the whole lines written before this error "
                                   "(check free disk space and the file system)");
}

void LineSink::flush() {
  if (failed_)
    throw InstrumentError(path_,
                          "an earlier write to the trace failed; open a new TraceSession to "
                          "capture again");
  if (fd_ < 0) {
    if (buffer_.empty()) return;
    throw InstrumentError(path_, "the trace file is closed; record events before finish()");
  }
  std::size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
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
  buffer_.clear();
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
