// The one error type of the library: a message with the file and 1-based line it is about.
// Everything below the CLI throws this; the CLI prints what() and picks the exit code.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace candle_graph {

class Error : public std::runtime_error {
 public:
  // `line` is 1-based; 0 means the error is about the whole file (or about no file at all).
  Error(std::string path, std::uint64_t line, std::string message)
      : std::runtime_error(format(path, line, message)),
        path_(std::move(path)),
        line_(line),
        message_(std::move(message)) {}

  explicit Error(std::string message) : Error({}, 0, std::move(message)) {}

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

  std::string path_;
  std::uint64_t line_;
  std::string message_;
};

}  // namespace candle_graph
