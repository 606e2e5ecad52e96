// Test hooks read from the environment: tests shrink a size (a read chunk, an export batch) so
// that its boundaries fall everywhere in small inputs.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace candle_graph::output {

// The positive whole number in environment variable `name`, else `fallback` (unset, empty, not
// a number, or 0).
inline std::size_t size_from_env(const char* name, std::size_t fallback) {
  const char* text = std::getenv(name);
  std::size_t n = 0;
  if (text != nullptr && std::from_chars(text, text + std::strlen(text), n).ec == std::errc() &&
      n > 0)
    return n;
  return fallback;
}

}  // namespace candle_graph::output
