// The one error type of the library: what went wrong (a kind), the file and 1-based line it is
// about, and a message. Everything below the CLI throws this; the CLI prints what() and turns the
// kind into an exit code (usage → 2, every other kind → 1).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace candle_graph {

enum class ErrorKind : std::uint8_t {
  input,      // a file we read is malformed, truncated or not of the expected format
  io,         // the file system refused: open, read, write, rename, fsync
  untrusted,  // the trace parsed, but its health forbids the analysis (trace6.md §8.2 step 1)
  usage,      // the request itself is wrong: arguments, an output that names an input, a
              // destination that is refused (inside an evidence bundle)
  resource,   // a configured limit (memory, size) would be exceeded
};

constexpr std::string_view to_string(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::input:
      return "input";
    case ErrorKind::io:
      return "io";
    case ErrorKind::untrusted:
      return "untrusted";
    case ErrorKind::usage:
      return "usage";
    case ErrorKind::resource:
      return "resource";
  }
  return "input";
}

class Error : public std::runtime_error {
 public:
  // `line` is 1-based; 0 means the error is about the whole file (or about no file at all).
  Error(ErrorKind kind, std::string path, std::uint64_t line, std::string message)
      : std::runtime_error(format(path, line, message)),
        kind_(kind),
        path_(std::move(path)),
        line_(line),
        message_(std::move(message)) {}

  // An input error: what a file held was wrong.
  Error(std::string path, std::uint64_t line, std::string message)
      : Error(ErrorKind::input, std::move(path), line, std::move(message)) {}

  explicit Error(std::string message) : Error({}, 0, std::move(message)) {}

  ErrorKind kind() const noexcept { return kind_; }
  const std::string& path() const noexcept { return path_; }
  std::uint64_t line() const noexcept { return line_; }
  // The message without the `path:line: ` prefix.
  const std::string& message() const noexcept { return message_; }

 private:
  static std::string format(const std::string& path, std::uint64_t line,
                            const std::string& message) {
    if (path.empty()) return message;
    if (line == 0) return path + ": " + message;
    return path + ":" + std::to_string(line) + ": " + message;
  }

  ErrorKind kind_;
  std::string path_;
  std::uint64_t line_;
  std::string message_;
};

}  // namespace candle_graph
