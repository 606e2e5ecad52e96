// RFC-4180 field splitting and bounded line reading (trace6.md §10.4 "CSV with header row").
#include "import/nsight/csv_reader.hpp"

#include <cstring>

#include "candle_graph/error.hpp"

namespace candle_graph::import::nsight {

void CsvSplitter::reset() {
  fields.clear();
  field.clear();
  in_quotes = false;
  quoted = false;
}

bool CsvSplitter::feed(std::string_view line) {
  // Copies runs of ordinary characters at once; only `,` and `"` need a decision.
  std::size_t i = 0;
  while (i < line.size()) {
    if (in_quotes) {
      const auto quote = line.find('"', i);
      if (quote == std::string_view::npos) {
        field.append(line.substr(i));
        i = line.size();
      } else if (quote + 1 < line.size() && line[quote + 1] == '"') {
        field.append(line.substr(i, quote + 1 - i));  // RFC 4180: doubled quote → one quote
        i = quote + 2;
      } else {
        field.append(line.substr(i, quote - i));
        in_quotes = false;
        i = quote + 1;
      }
      continue;
    }
    const auto special = line.find_first_of(",\"", i);
    const std::size_t stop = special == std::string_view::npos ? line.size() : special;
    field.append(line.substr(i, stop - i));
    i = stop;
    if (i == line.size()) break;
    if (line[i] == ',') {
      fields.push_back(std::move(field));
      field.clear();
      quoted = false;
    } else if (field.empty() && !quoted) {
      in_quotes = true;
      quoted = true;
    } else {
      field.push_back('"');  // lenient: a stray quote inside an unquoted field is kept literally
    }
    ++i;
  }
  if (in_quotes) {
    field.push_back('\n');  // the quoted field spans a line break
    return false;
  }
  fields.push_back(std::move(field));
  field.clear();
  quoted = false;
  return true;
}

std::vector<std::string> split_csv_line(std::string_view line) {
  CsvSplitter splitter;
  if (!splitter.feed(line)) {
    splitter.field.pop_back();  // drop the '\n' added for continuation
    splitter.fields.push_back(std::move(splitter.field));
  }
  return std::move(splitter.fields);
}

LineReader::LineReader(const std::filesystem::path& path)
    : file_(std::fopen(path.c_str(), "rb")), path_(path.string()), buffer_(1u << 16) {}

LineReader::~LineReader() {
  if (file_ != nullptr) std::fclose(file_);
}

bool LineReader::refill() {
  if (eof_ || file_ == nullptr) return false;
  const std::size_t n = std::fread(buffer_.data(), 1, buffer_.size(), file_);
  pos_ = 0;
  end_ = n;
  if (n == 0) eof_ = true;
  return n > 0;
}

bool LineReader::next(std::string& line) {
  line.clear();
  bool any = false;
  for (;;) {
    if (pos_ == end_ && !refill()) break;
    any = true;
    const char* begin = buffer_.data() + pos_;
    const char* stop = static_cast<const char*>(std::memchr(begin, '\n', end_ - pos_));
    const std::size_t take = stop != nullptr ? static_cast<std::size_t>(stop - begin) : end_ - pos_;
    if (line.size() + take > max_line_bytes) {
      throw Error(path_, line_number_ + 1, "line longer than 16 MiB; not an nsys stats CSV");
    }
    line.append(begin, take);
    pos_ += take;
    if (stop != nullptr) {
      ++pos_;  // consume '\n'
      break;
    }
  }
  if (!any) return false;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  ++line_number_;
  return true;
}

}  // namespace candle_graph::import::nsight
