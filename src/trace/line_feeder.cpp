#include "trace/line_feeder.hpp"
#include "trace/file_read.hpp"
#include "trace/read_sizes.hpp"

#include <algorithm>
#include <cstring>

namespace candle_graph {
namespace {

using read_sizes::kPadding;

bool is_ascii_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

}  // namespace

std::string_view trim_line(std::string_view s) noexcept {
  while (!s.empty() && is_ascii_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ascii_space(s.back())) s.remove_suffix(1);
  return s;
}

std::size_t LineFeeder::feed(const char* data, std::size_t size, bool final) {
  std::size_t pos = 0;
  if (at_file_start_) {
    at_file_start_ = false;
    if (size >= 3 && std::memcmp(data, "\xEF\xBB\xBF", 3) == 0) pos = 3;  // UTF-8 BOM
  }
  while (pos < size) {
    // Whole lines, up to kBatchBytes, go through one batched stage 1; a line longer than
    // that, and whatever the batch stopped at, go line by line.
    const std::size_t window = std::min(LineParser::kBatchBytes, size - pos);
    const void* last_nl = ::memrchr(data + pos, '\n', window);
    if (last_nl == nullptr) {
      const std::size_t next = feed_lines(data, pos, pos + 1, size, final);
      if (next == pos) break;  // an incomplete line: wait for more data
      pos = next;
      continue;
    }
    const std::size_t region_end =
        static_cast<std::size_t>(static_cast<const char*>(last_nl) - data) + 1;
    feed_region(data, pos, region_end, size, final);
    pos = region_end;
  }
  return pos;
}

// The whole lines [pos, region_end): canonical lines through the fast scanner, every run of
// other lines (blank ones aside) through the exact simdjson paths, all in stream order.
void LineFeeder::feed_region(const char* data, std::size_t pos, std::size_t region_end,
                             std::size_t size, bool final) {
  std::size_t pending = pos;  // start of the run of lines not handled yet
  while (pos < region_end) {
    const FastLineScanner::Result r = scanner_.scan(data + pos);
    if (r.kind == FastLineScanner::Kind::none) {
      const void* nl = std::memchr(data + pos, '\n', region_end - pos);
      pos = static_cast<std::size_t>(static_cast<const char*>(nl) - data) + 1;
      continue;
    }
    if (pending < pos) feed_slow(data, pending, pos, size, final);
    add_scanned(r.kind, ++line_);
    pos = pending = static_cast<std::size_t>(r.next - data);
  }
  if (pending < region_end) feed_slow(data, pending, region_end, size, final);
}

// Whole lines [pos, end) with simdjson: one batched stage 1, the per-line path from wherever
// the batch stopped.
void LineFeeder::feed_slow(const char* data, std::size_t pos, std::size_t end, std::size_t size,
                           bool final) {
  const auto r = parser_.parse_batch(data + pos, end - pos, line_, source_, *sink_);
  pos += r.consumed;
  line_ += r.lines;
  if (pos < end) feed_lines(data, pos, end, size, final);
}

void LineFeeder::add_scanned(FastLineScanner::Kind kind, std::uint64_t line) {
  using K = FastLineScanner::Kind;
  switch (kind) {
    case K::span_start:
      return sink_->add_span_start(scanner_.span_start(), line);
    case K::span_end:
      return sink_->add_span_end(scanner_.span_end(), line);
    case K::op:
      return sink_->add_op(scanner_.op(), line);
    case K::tensor:
      return sink_->add_tensor(scanner_.tensor(), line);
    case K::memory:
      return sink_->add_memory(scanner_.memory(), line);
    case K::device_memory:
      return sink_->add_device_memory(scanner_.device_memory(), line);
    case K::gradient:
      return sink_->add_gradient(scanner_.gradient(), line);
    case K::edge:
      return sink_->add_edge(scanner_.edge(), line);
    case K::none:
      return;
  }
}

// Parses the lines that start in [pos, limit) one by one; returns where it stopped (a line
// start: `limit` or later, or `pos` of an incomplete last line when not `final`).
std::size_t LineFeeder::feed_lines(const char* data, std::size_t pos, std::size_t limit,
                                   std::size_t size, bool final) {
  while (pos < limit) {
    const void* nl = std::memchr(data + pos, '\n', size - pos);
    if (nl == nullptr && !final) break;
    const std::size_t end =
        nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - data) : size;
    ++line_;
    // A line this long arrives here whole only when a reader's buffer happened to hold it: the
    // same error as for one whose end was never read (file_read.hpp).
    if (end - pos > max_line_bytes()) throw line_too_long(source_, line_);
    const std::string_view line = trim_line(std::string_view(data + pos, end - pos));
    if (!line.empty()) {
      const std::size_t capacity = static_cast<std::size_t>(data + size - line.data()) + kPadding;
      const TraceEvent& e = parser_.parse(line, capacity, source_, line_);
      sink_->add(e, line_);
    }
    pos = nl ? end + 1 : size;
  }
  return pos;
}

}  // namespace candle_graph
