#include "cli/standard_output.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "candle_graph/error.hpp"

namespace candle_graph::cli {

namespace {

// errno as stdio left it, or nothing to add when the failure happened in an earlier call whose
// errno is gone (the stream's error flag outlives it).
[[noreturn]] void throw_stdout_failed(int error) {
  std::string message = "cannot write to standard output";
  if (error != 0) message += std::string(": ") + std::strerror(error);
  throw Error(ErrorKind::io, "<stdout>", 0, message);
}

}  // namespace

void write_stdout(std::string_view bytes) {
  errno = 0;
  if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size())
    throw_stdout_failed(errno);
}

void flush_stdout() {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int error = errno;
  if (!flushed || std::ferror(stdout)) throw_stdout_failed(error);
}

}  // namespace candle_graph::cli
