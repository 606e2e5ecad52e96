// The structural scanner: one pass over each chunk, byte by byte outside strings and with a tight
// loop inside them (most of a Kineto trace is string bytes). It only needs to know where each
// event object starts and ends and which top-level key a value belongs to; simdjson validates the
// inside of every event afterwards.
#include "import/trace_event/event_scanner.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <memory>
#include <vector>

#include "candle_graph/error.hpp"

namespace candle_graph::import::trace_event {
namespace {

constexpr std::array<bool, 256> make_string_stops() {
  std::array<bool, 256> t{};
  t['"'] = true;
  t['\\'] = true;
  return t;
}
constexpr std::array<bool, 256> kStringStop = make_string_stops();

// Inside an event (or another nested value) only strings and brackets move the scanner; commas,
// colons, numbers and whitespace matter at the top level and between events only.
constexpr std::array<bool, 256> make_nested_stops() {
  std::array<bool, 256> t{};
  for (unsigned char c : {'"', '{', '[', '}', ']'}) t[c] = true;
  return t;
}
constexpr std::array<bool, 256> kNestedStop = make_nested_stops();

bool is_space(unsigned char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// Top-level Kineto keys the converter reads; the rest (INFO, ...) is skipped. distributedInfo
// ({"backend", "rank", "world_size"}) names the rank of a distributed run, deviceProperties
// ([{"id", "name", ...}], computeProperties in Kineto of 2021) the model of each GPU.
bool wanted_top_level(std::string_view key) {
  return key == "otherData" || key == "traceName" || key == "baseTimeNanoseconds" ||
         key == "schemaVersion" || key == "displayTimeUnit" || key == "distributedInfo" ||
         key == "deviceProperties" || key == "computeProperties";
}

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};

class Scanner {
 public:
  Scanner(std::string path, EventScanner::Handler& handler, const ProgressCallback& progress,
          std::size_t chunk_bytes, std::size_t max_value_bytes)
      : path_(std::move(path)),
        h_(handler),
        progress_(progress),
        chunk_bytes_(chunk_bytes),
        max_value_bytes_(max_value_bytes) {}

  EventScanner::Result run() {
    std::unique_ptr<gzFile_s, GzCloser> file(gzopen(path_.c_str(), "rb"));
    if (!file) throw Error(path_, 0, "cannot open the file for reading");
    gzbuffer(file.get(), 1 << 17);
    std::error_code ec;
    const auto size = std::filesystem::file_size(path_, ec);
    file_size_ = ec ? 0 : static_cast<std::uint64_t>(size);
    std::vector<unsigned char> buf(std::max<std::size_t>(chunk_bytes_, 1));
    bool first = true;
    for (;;) {
      const int got = gzread(file.get(), buf.data(), static_cast<unsigned>(buf.size()));
      if (first) {
        result_.gzip = gzdirect(file.get()) == 0;
        first = false;
      }
      if (got < 0) {
        int code = 0;
        const char* msg = gzerror(file.get(), &code);
        throw Error(path_, 0,
                    std::string("cannot read ") + (result_.gzip ? "the gzip stream" : "the file") +
                        " after byte " + std::to_string(base_) + ": " + (msg ? msg : "error"));
      }
      if (got == 0) break;
      chunk(buf.data(), static_cast<std::size_t>(got));
      base_ += static_cast<std::uint64_t>(got);
      if (progress_) {
        const auto at = gzoffset(file.get());
        progress_(at > 0 ? static_cast<std::uint64_t>(at) : base_, file_size_);
      }
    }
    if (progress_ && file_size_ > 0) progress_(file_size_, file_size_);
    int code = Z_OK;
    gzerror(file.get(), &code);
    if (code != Z_OK) {
      throw Error(path_, 0,
                  "the gzip stream is truncated or corrupt after " + std::to_string(base_) +
                      " decompressed bytes");
    }
    finish();
    result_.bytes = base_;
    return result_;
  }

 private:
  enum class Region { none, event, capture };

  [[noreturn]] void fail(std::uint64_t offset, const std::string& what) const {
    throw Error(path_, 0,
                what + " at byte " + std::to_string(offset) +
                    (result_.gzip ? " (of the decompressed stream)" : ""));
  }

  // A byte other than whitespace outside the one top-level value.
  [[noreturn]] void fail_outside_value(std::uint64_t offset, unsigned char c) const {
    fail(offset, top_done_ ? "unexpected data after the end of the JSON value"
                           : "not a PyTorch profiler trace: expected a JSON object with "
                             "traceEvents or an array of events, found '" +
                                 std::string(1, static_cast<char>(c)) + "'");
  }

  void begin_region(Region kind, std::size_t i) {
    region_ = kind;
    region_start_ = i;
    region_offset_ = base_ + i;
    spill_.clear();
  }

  std::string_view end_region(const unsigned char* buf, std::size_t end) {
    const char* data = reinterpret_cast<const char*>(buf);
    region_ = Region::none;
    if (spill_.empty()) return {data + region_start_, end - region_start_};
    spill_.append(data + region_start_, end - region_start_);
    return spill_;
  }

  void end_capture(const unsigned char* buf, std::size_t end) {
    const std::string_view raw = end_region(buf, end);
    h_.top_level_value(key_, raw, region_offset_);
  }

  void chunk(const unsigned char* buf, std::size_t n) {
    std::size_t i = 0;
    if (base_ == 0 && n >= 3 && buf[0] == 0xEF && buf[1] == 0xBB && buf[2] == 0xBF) i = 3;
    while (i < n) {
      if (in_string_) {
        if (escape_) {
          escape_ = false;
          ++i;
          continue;
        }
        while (i < n && !kStringStop[buf[i]]) ++i;
        if (i == n) break;
        if (buf[i] == '\\') {
          escape_ = true;
          ++i;
          continue;
        }
        in_string_ = false;  // closing quote
        if (in_key_) {
          in_key_ = false;
          key_.append(reinterpret_cast<const char*>(buf) + key_start_, i - key_start_);
        }
        ++i;
        continue;
      }
      if (depth_ >= 2 && !(depth_ == events_depth_ && events_open_)) {
        while (i < n && !kNestedStop[buf[i]]) ++i;
        if (i == n) break;
      }
      const unsigned char c = buf[i];
      switch (c) {
        case '"':
          if (depth_ == 0) fail_outside_value(base_ + i, c);  // a string before or after it
          in_string_ = true;
          if (depth_ == 1 && layout_object_) {
            if (expect_key_) {
              in_key_ = true;
              key_.clear();
              key_start_ = i + 1;
              key_offset_ = base_ + i;
            } else {
              value_starts(i);
            }
          } else if (depth_ == events_depth_ && events_open_) {
            fail(base_ + i, "an element of the event array is not an object");
          }
          break;
        case '{':
        case '[':
          open(c, i);
          break;
        case '}':
        case ']':
          close(c, buf, i);
          break;
        case ',':
          if (depth_ == 1 && layout_object_) {
            if (region_ == Region::capture) end_capture(buf, i);
            if (expect_key_) fail(base_ + i, "malformed JSON: ',' where a key was expected");
            expect_key_ = true;
            value_pending_ = false;
          }
          break;
        case ':':
          if (depth_ == 1 && layout_object_) {
            if (!expect_key_) fail(base_ + i, "malformed JSON: unexpected ':'");
            expect_key_ = false;
            value_pending_ = true;
          }
          break;
        default:
          if (is_space(c)) break;
          if (depth_ == 0) fail_outside_value(base_ + i, c);
          if (depth_ == 1 && layout_object_) {
            if (expect_key_) fail(base_ + i, "malformed JSON: expected a quoted key");
            value_starts(i);
          } else if (depth_ == events_depth_ && events_open_) {
            fail(base_ + i, "an element of the event array is not an object");
          }
          break;
      }
      ++i;
    }
    // Carry what crosses the chunk boundary, up to the cap.
    if (in_key_) {
      key_.append(reinterpret_cast<const char*>(buf) + key_start_, n - key_start_);
      key_start_ = 0;
      if (key_.size() > max_value_bytes_) fail(key_offset_, too_long("a top-level key"));
    }
    if (region_ != Region::none) {
      spill_.append(reinterpret_cast<const char*>(buf) + region_start_, n - region_start_);
      region_start_ = 0;
      if (spill_.size() > max_value_bytes_)
        fail(region_offset_,
             too_long(region_ == Region::event ? "an event" : "the value of \"" + key_ + "\""));
    }
  }

  std::string too_long(const std::string& what) const {
    return what + " longer than " + std::to_string(max_value_bytes_) +
           " bytes, which no profiler trace holds, starts";
  }

  void value_starts(std::size_t i) {
    if (!value_pending_) return;  // already inside this value (scalar continuation)
    value_pending_ = false;
    if (key_ == "traceEvents") return;  // handled in open()
    if (wanted_top_level(key_)) {
      begin_region(Region::capture, i);
    } else {
      ++result_.skipped_top_level;
    }
  }

  void open(unsigned char c, std::size_t i) {
    if (depth_ == 0) {
      if (top_done_) {
        fail(base_ + i, saw_events_ ? std::string("unexpected data after the end of the JSON value")
                                    : std::string("not a PyTorch profiler trace: a second JSON "
                                                  "value follows the first (JSON Lines?)"));
      }
      if (c == '[') {
        result_.layout = EventScanner::Layout::bare_array;
        events_depth_ = 1;
        events_open_ = true;
      } else {
        layout_object_ = true;
        expect_key_ = true;
      }
    } else if (depth_ == 1 && layout_object_) {
      if (expect_key_) fail(base_ + i, "malformed JSON: expected a quoted key");
      if (value_pending_ && key_ == "traceEvents") {
        value_pending_ = false;
        if (c != '[') fail(base_ + i, "not a PyTorch profiler trace: traceEvents is not an array");
        if (saw_events_) fail(base_ + i, "traceEvents appears twice");
        saw_events_ = true;
        events_depth_ = 2;
        events_open_ = true;
      } else {
        value_starts(i);
      }
    } else if (depth_ == events_depth_ && events_open_) {
      if (c != '{') fail(base_ + i, "an element of the event array is not an object");
      begin_region(Region::event, i);
    }
    if (depth_ >= kMaxDepth) fail(base_ + i, "JSON nested deeper than 1024 levels");
    stack_[depth_++] = static_cast<char>(c);
  }

  void close(unsigned char c, const unsigned char* buf, std::size_t i) {
    if (depth_ == 0)
      fail(base_ + i, std::string("malformed JSON: unmatched '") + static_cast<char>(c) + "'");
    const char open_c = stack_[depth_ - 1];
    if ((c == '}') != (open_c == '{')) {
      fail(base_ + i,
           std::string("malformed JSON: '") + static_cast<char>(c) + "' closes '" + open_c + "'");
    }
    if (depth_ == 1 && layout_object_) {
      if (region_ == Region::capture) end_capture(buf, i);
    }
    --depth_;
    if (region_ == Region::event && depth_ == events_depth_) {
      const std::string_view ev = end_region(buf, i + 1);
      h_.event(ev, region_offset_);
    } else if (events_open_ && depth_ == events_depth_ - 1) {
      events_open_ = false;
    }
    if (depth_ == 1 && layout_object_) expect_key_ = false;
    if (depth_ == 0) top_done_ = true;
  }

  void finish() {
    if (!top_done_ && depth_ == 0 && !in_string_) fail(base_, "empty file: no JSON value");
    if (depth_ > 0 || in_string_) {
      if (result_.layout == EventScanner::Layout::bare_array && depth_ == 1 && !in_string_ &&
          region_ == Region::none) {
        result_.missing_array_end = true;  // Chrome's loader accepts this form too
        return;
      }
      fail(base_, region_ == Region::event
                      ? "unexpected end of file: the JSON is truncated inside the event that "
                        "starts at byte " +
                            std::to_string(region_offset_)
                      : std::string("unexpected end of file: the JSON is truncated"));
    }
    if (layout_object_ && !saw_events_) {
      throw Error(path_, 0,
                  "not a PyTorch profiler trace: the top-level object has no traceEvents array");
    }
  }

  static constexpr int kMaxDepth = 1024;
  std::string path_;
  EventScanner::Handler& h_;
  const ProgressCallback& progress_;
  std::size_t chunk_bytes_;
  std::size_t max_value_bytes_;
  std::uint64_t file_size_ = 0;
  EventScanner::Result result_;
  std::uint64_t base_ = 0;
  bool in_string_ = false;
  bool escape_ = false;
  bool in_key_ = false;
  std::size_t key_start_ = 0;
  std::uint64_t key_offset_ = 0;  // of its opening quote
  std::string key_;
  bool layout_object_ = false;
  bool expect_key_ = false;
  bool value_pending_ = false;
  bool top_done_ = false;
  bool saw_events_ = false;
  bool events_open_ = false;
  int events_depth_ = -1;
  int depth_ = 0;
  std::array<char, kMaxDepth> stack_{};
  Region region_ = Region::none;
  std::size_t region_start_ = 0;
  std::uint64_t region_offset_ = 0;
  std::string spill_;
};

}  // namespace

EventScanner::Result EventScanner::scan(const std::filesystem::path& path, Handler& handler,
                                        const ProgressCallback& progress, std::size_t chunk_bytes,
                                        std::size_t max_value_bytes) {
  Scanner scanner(path.string(), handler, progress, chunk_bytes, max_value_bytes);
  return scanner.run();
}

}  // namespace candle_graph::import::trace_event
