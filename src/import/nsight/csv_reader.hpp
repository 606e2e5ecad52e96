// Streaming RFC-4180 reader for `nsys stats --format csv` output (trace6.md §10.4; no Debian C++
// CSV library is installed, so this small one lives here). Reads bounded lines from a file so a 1
// GB report is never held in memory, and counts 1-based physical lines for diagnostics.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace candle_graph::import::nsight {

// Splits one physical line into fields. Returns false when a quoted field is still open at the
// end of the line (the record continues on the next line); `fields`/`pending` carry the state.
struct CsvSplitter {
  std::vector<std::string> fields;
  std::string field;
  bool in_quotes = false;
  bool quoted = false;  // the current field started with a quote

  void reset();
  bool feed(std::string_view line);  // true when the record is complete
};

// Convenience for header detection: the fields of one self-contained line (unbalanced quotes
// are closed at the end of the line; preamble text never spans lines).
std::vector<std::string> split_csv_line(std::string_view line);

// Physical lines of a file, without `\n` / `\r\n`. Lines longer than `max_line_bytes` are an
// error (a binary or corrupt file must not be buffered whole).
class LineReader {
 public:
  explicit LineReader(const std::filesystem::path& path);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  bool is_open() const { return file_ != nullptr; }
  // Returns false at end of file. Throws candle_graph::Error on an over-long line.
  bool next(std::string& line);
  std::uint64_t line_number() const { return line_number_; }

  static constexpr std::size_t max_line_bytes = 16u << 20;

 private:
  bool refill();

  std::FILE* file_ = nullptr;
  std::string path_;
  std::vector<char> buffer_;
  std::size_t pos_ = 0;
  std::size_t end_ = 0;
  bool eof_ = false;
  std::uint64_t line_number_ = 0;
};

}  // namespace candle_graph::import::nsight
