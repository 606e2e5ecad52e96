#include "sql/result_format.hpp"

#include <string>
#include <vector>

#include "output/json_stream.hpp"
#include "output/json_text.hpp"
#include "output/visible_text.hpp"

namespace candle_graph::sql {

namespace {

void append_hex(std::string& out, std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (unsigned char c : bytes) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
}

// Integers in decimal, reals in the shortest form that reads back to the same double.
void append_number(std::string& out, const Cell& cell) {
  if (cell.type == CellType::integer)
    output::append_i64(out, cell.integer);
  else
    output::append_f64(out, cell.real);
}

class JsonResult final : public ResultSink {
 public:
  JsonResult(TextSink out, std::optional<std::uint64_t> limit)
      : w_(std::move(out)), limit_(limit) {}

  void begin(std::span<const std::string> columns) override {
    w_.begin_object();
    w_.schema_key("schema").string(kSqlResultSchema);
    w_.schema_key("columns").begin_array();
    for (const std::string& c : columns) w_.string(c);
    w_.end_array();
    w_.schema_key("rows").begin_array();
  }

  void row(std::span<const Cell> cells) override {
    w_.begin_array();
    for (const Cell& c : cells) {
      switch (c.type) {
        case CellType::null:
          w_.null();
          break;
        case CellType::integer:
          w_.i64(c.integer);
          break;
        case CellType::real:
          w_.f64(c.real);
          break;
        case CellType::text:
          w_.string(c.bytes);
          break;
        case CellType::blob: {
          std::string hex;
          append_hex(hex, c.bytes);
          w_.begin_object().schema_key("hex").string(hex).end_object();
          break;
        }
      }
    }
    w_.end_array();
  }

  void end(std::uint64_t delivered, std::uint64_t total, bool truncated) override {
    w_.end_array();
    w_.schema_key("returned_rows").u64(delivered);
    w_.schema_key("total_rows").u64(total);
    w_.schema_key("truncated").boolean(truncated);
    w_.schema_key("limit");
    if (limit_)
      w_.u64(*limit_);
    else
      w_.null();
    w_.end_object();
    w_.finish();
  }

 private:
  output::JsonStream w_;
  std::optional<std::uint64_t> limit_;
};

class CsvResult final : public ResultSink {
 public:
  explicit CsvResult(TextSink out) : out_(std::move(out)) {}

  void begin(std::span<const std::string> columns) override {
    for (std::size_t i = 0; i < columns.size(); ++i) {
      if (i) buf_ += ',';
      field(columns[i]);
    }
    buf_ += "\r\n";
  }

  void row(std::span<const Cell> cells) override {
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i) buf_ += ',';
      const Cell& c = cells[i];
      switch (c.type) {
        case CellType::null:
          break;
        case CellType::integer:
        case CellType::real:
          append_number(buf_, c);
          break;
        case CellType::text:
          field(c.bytes);
          break;
        case CellType::blob:
          append_hex(buf_, c.bytes);
          break;
      }
    }
    buf_ += "\r\n";
    if (buf_.size() > (1u << 20)) flush();
  }

  void end(std::uint64_t, std::uint64_t, bool) override { flush(); }

 private:
  void field(std::string_view s) {
    if (s.find_first_of("\",\r\n") == std::string_view::npos) {
      buf_ += s;
      return;
    }
    buf_ += '"';
    for (char ch : s) {
      if (ch == '"') buf_ += '"';
      buf_ += ch;
    }
    buf_ += '"';
  }
  void flush() {
    out_(buf_);
    buf_.clear();
  }
  TextSink out_;
  std::string buf_;
};

// Display width in characters: UTF-8 continuation bytes do not count.
std::size_t display_width(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// A cell as one visible line: control characters escaped (output/visible_text.hpp), cut to `max`
// characters with "…" (cut at a character boundary; an escape counts as one).
std::string visible(std::string_view s, std::size_t max) {
  std::string out;
  std::size_t chars = 0;
  for (std::size_t i = 0; i < s.size();) {
    const bool starts_char = (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80;
    if (starts_char && chars >= max) {
      out += "…";
      return out;
    }
    chars += starts_char;
    i += output::append_visible(out, s, i);
  }
  return out;
}

class TableResult final : public ResultSink {
 public:
  TableResult(TextSink out, std::size_t max_width) : out_(std::move(out)), max_(max_width) {}

  void begin(std::span<const std::string> columns) override {
    header_.reserve(columns.size());
    for (const std::string& c : columns) header_.push_back(visible(c, max_));
    right_.assign(columns.size(), false);
  }

  void row(std::span<const Cell> cells) override {
    std::vector<std::string>& r = rows_.emplace_back();
    r.reserve(cells.size());
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const Cell& c = cells[i];
      std::string text;
      switch (c.type) {
        case CellType::null:
          text = "NULL";
          break;
        case CellType::integer:
        case CellType::real:
          append_number(text, c);
          right_[i] = true;
          break;
        case CellType::text:
          text = visible(c.bytes, max_);
          break;
        case CellType::blob:
          text = "x'";
          append_hex(text, c.bytes.substr(0, max_ / 2));
          text += c.bytes.size() > max_ / 2 ? "…'" : "'";
          break;
      }
      r.push_back(std::move(text));
    }
  }

  void end(std::uint64_t delivered, std::uint64_t, bool) override {
    std::vector<std::size_t> width(header_.size());
    for (std::size_t i = 0; i < header_.size(); ++i) width[i] = display_width(header_[i]);
    for (const auto& r : rows_)
      for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], display_width(r[i]));
    std::string text;
    line(text, header_, width);
    for (std::size_t i = 0; i < width.size(); ++i) {
      if (i) text += "  ";
      text.append(width[i], '-');
    }
    text += '\n';
    for (const auto& r : rows_) line(text, r, width);
    text += "(" + std::to_string(delivered) + (delivered == 1 ? " row)\n" : " rows)\n");
    out_(text);
  }

 private:
  void line(std::string& text, const std::vector<std::string>& cells,
            const std::vector<std::size_t>& width) const {
    std::string row;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i) row += "  ";
      const std::size_t pad = width[i] - display_width(cells[i]);
      if (right_[i]) row.append(pad, ' ');
      row += cells[i];
      if (!right_[i]) row.append(pad, ' ');
    }
    while (!row.empty() && row.back() == ' ') row.pop_back();
    text += row;
    text += '\n';
  }

  TextSink out_;
  std::size_t max_;
  std::vector<std::string> header_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace

std::unique_ptr<ResultSink> json_result(TextSink out, std::optional<std::uint64_t> limit) {
  return std::make_unique<JsonResult>(std::move(out), limit);
}

std::unique_ptr<ResultSink> csv_result(TextSink out) {
  return std::make_unique<CsvResult>(std::move(out));
}

std::unique_ptr<ResultSink> table_result(TextSink out, std::size_t max_width) {
  return std::make_unique<TableResult>(std::move(out), max_width);
}

}  // namespace candle_graph::sql
