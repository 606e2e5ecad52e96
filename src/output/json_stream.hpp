// The JSON writer of every document the tool writes: streaming, in one of two styles. Pretty is
// exactly serde_json's pretty printer (2-space indent, `"key": value`, `[]` and `{}` when empty),
// the layout of every CLI output (trace6.md §9.5); compact has no whitespace at all, as the
// viewer embeds its payload (trace6.md §12.1). Large arrays (graph nodes, edges, the memory
// timeline) are written straight into the output text, flushed to a sink in ~1 MiB pieces, so no
// DOM of a million nodes is ever built. Numbers and strings print like serde_json
// (output/json_text).
#pragma once

#include <array>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "output/copy_short.hpp"
#include "output/decimal.hpp"
#include "output/json_text.hpp"

namespace candle_graph::output {

// Declaration order (struct-serialized documents) or alphabetical at every level (documents the
// original built with json!, trace6.md §9.5).
enum class KeyOrder : std::uint8_t { declaration, sorted };

enum class JsonStyle : std::uint8_t { pretty, compact };

class JsonStream {
 public:
  using Sink = std::function<void(std::string_view)>;
  // Takes the buffer itself instead of a copy of its text (its first `used` bytes) and leaves
  // another in its place, of any size and contents: the stream's next text is written over it.
  using Handover = std::function<void(std::string& buffer, std::size_t used)>;
  // Without a sink the text accumulates and take() returns it.
  explicit JsonStream(Sink sink = {}, JsonStyle style = JsonStyle::pretty,
                      std::size_t flush_at = std::size_t{1} << 20);

  // begin_object and end_object are inline when the indentation is cached and the buffer has
  // room: every node, edge and timeline point of a graph is one object.
  JsonStream& begin_object() {
    const std::size_t width = 2 * stack_.size();
    if (stack_.empty() || width + 1 > kNewlineIndent.size() ||
        len_ + 2 + kNewlineIndent.size() > buf_.size())
      return open_slow('{', false);
    char* out = cursor();
    if (after_key_) {
      after_key_ = false;
    } else {  // an element of an array
      out = member_break(out, width);
    }
    *out = '{';
    len_ = static_cast<std::size_t>(out + 1 - buf_.data());
    stack_.push_back({false, true});
    return *this;
  }
  JsonStream& end_object() {
    const std::size_t width = 2 * (stack_.size() - 1);
    if (width + 1 > kNewlineIndent.size() || len_ + 1 + kNewlineIndent.size() > buf_.size()) {
      close('}');
      return *this;
    }
    char* out = cursor();
    if (!stack_.back().empty) {
      std::memcpy(out, kNewlineIndent.data(), kNewlineIndent.size());
      out += (width + 1) & pretty_mask_;
    }
    stack_.pop_back();
    *out = '}';
    len_ = static_cast<std::size_t>(out + 1 - buf_.data());
    return *this;
  }
  JsonStream& begin_array();
  JsonStream& end_array();
  JsonStream& key(std::string_view k);  // the next value belongs to this key
  // The same for a key of the schema itself (the static key tables of write_object): ASCII
  // letters, digits and `_` only, so it is copied without the escaping scan (asserted in debug
  // builds). Keys that come from the trace (tags) must use key().
  JsonStream& schema_key(std::string_view k) {
    // Inline fast path (a key is written ~2 M times per 30 MB of trace): a member at a depth the
    // cached indentation covers, a key of at most 16 bytes, room in the buffer.
    assert(is_schema_key(k));
    const std::size_t width = 2 * stack_.size();
    if (width + 1 > kNewlineIndent.size() || k.size() > 16 ||
        len_ + 1 + kNewlineIndent.size() + 20 > buf_.size())
      return schema_key_slow(k);
    char* out = member_break(cursor(), width);
    *out = '"';
    copy_short(out + 1, k.data(), k.size());
    std::memcpy(out + 1 + k.size(), "\": ", 3);  // the space is not kept in compact style
    len_ = static_cast<std::size_t>(out + 3 + (1 & pretty_mask_) + k.size() - buf_.data());
    after_key_ = true;
    return *this;
  }

  // string and u64 right after a key, with room in the buffer, are written inline.
  JsonStream& string(std::string_view s) {
    if (!after_key_ || s.size() > shorten_over_ || len_ + 6 * s.size() + 2 > buf_.size())
      return string_slow(s);
    after_key_ = false;
    len_ = static_cast<std::size_t>(write_json_string(cursor(), s) - buf_.data());
    return *this;
  }
  JsonStream& u64(std::uint64_t v) {
    if (!after_key_ || len_ + 24 > buf_.size()) return u64_slow(v);
    after_key_ = false;
    len_ = static_cast<std::size_t>(write_decimal(cursor(), v) - buf_.data());
    return *this;
  }
  JsonStream& i64(std::int64_t v);
  JsonStream& f64(double v);  // shortest round-trip, `13.0`
  JsonStream& boolean(bool v);
  JsonStream& null();
  // A value written elsewhere as JSON text, copied as it is (a compact part reused twice).
  JsonStream& raw_value(std::string_view json);

  // Ends the document with the CLI's trailing newline and flushes everything to the sink.
  void finish();
  std::string take();
  // From now on full buffers go to `handover` (a writing thread: PipelinedSink::hand_over)
  // instead of being copied by the sink.
  void set_handover(Handover handover) { handover_ = std::move(handover); }
  // From now on a string value longer than `bytes` is written as `shorten(value)`, which must be
  // at most `bytes` long (keys are never shortened). For documents read by people, where a
  // name of 50 MB written a dozen times makes a page no browser opens.
  void shorten_strings_over(std::size_t bytes,
                            std::function<std::string(std::string_view)> shorten) {
    shorten_over_ = bytes;
    shorten_ = std::move(shorten);
  }

  // How many threads may format the elements of this stream's large arrays
  // (output/parallel_elements.hpp); 1, the default, formats everything on the calling thread.
  void set_format_threads(unsigned threads) { format_threads_ = threads > 0 ? threads : 1; }
  unsigned format_threads() const noexcept { return format_threads_; }
  // From now on `counted(n)` hears of every n elements of large arrays (write_elements in
  // output/parallel_elements.hpp) written into this stream, a batch at a time: what a progress
  // line counts while a large document is written. Fragments do not inherit it.
  void on_elements_written(std::function<void(std::size_t)> counted) {
    elements_written_ = std::move(counted);
  }
  void count_elements(std::size_t n) {
    if (elements_written_) elements_written_(n);
  }
  // A stream without a sink whose text continues this one's at its present level: the same
  // style, depth and string bound, writing into `buffer` (its bytes are written over; a short
  // one is grown). With `after_element` its first element is preceded by a separator, as when
  // elements were written at this level before it. It formats on one thread. Reading this
  // stream only, it may be called from several threads at once.
  JsonStream fragment(std::string buffer, bool after_element) const;
  // Writes the text of `fragment` (made by fragment() at this level) as if this stream had
  // written it. The fragment is left empty with a buffer to reuse (its own, or the one the
  // handover gave back).
  void append_fragment(JsonStream& fragment);
  // The length of the text written and not yet passed on.
  std::size_t size() const noexcept { return len_; }
  // The buffer itself, for the next fragment (its bytes are not cleared).
  std::string release_buffer() {
    len_ = 0;
    return std::move(buf_);
  }

 private:
  // A newline and 63 spaces: one copy writes the line break and the indentation of any level up
  // to 31 (deeper levels take the slow path).
  static constexpr std::array<char, 64> kNewlineIndent = [] {
    std::array<char, 64> a{};
    a.fill(' ');
    a[0] = '\n';
    return a;
  }();

  static bool is_schema_key(std::string_view k) noexcept;  // ASCII letters, digits, `_`
  // The comma (unless the level is still empty), the line break and the indentation `width` of
  // a new member or element, written at `out` with room for 1 + kNewlineIndent.size() bytes and
  // width + 1 <= kNewlineIndent.size(); returns the end. One fixed-size copy: only width + 1 of
  // it count.
  char* member_break(char* out, std::size_t width) noexcept {
    Level& l = stack_.back();
    *out = ',';
    out += l.empty ? 0 : 1;
    l.empty = false;
    // The line break and indentation are copied either way (a fixed-size copy); compact text
    // keeps none of it. No branch on the style in the writer's hottest path.
    std::memcpy(out, kNewlineIndent.data(), kNewlineIndent.size());
    return out + ((width + 1) & pretty_mask_);
  }
  JsonStream& schema_key_slow(std::string_view k);
  JsonStream& open_slow(char bracket, bool array);
  JsonStream& string_slow(std::string_view s);
  std::size_t shorten_over_ = static_cast<std::size_t>(-1);
  std::function<std::string(std::string_view)> shorten_;
  JsonStream& u64_slow(std::uint64_t v);
  void before_value();
  void newline_indent();
  // The comma before a member and the line break with indentation, leaving room for `extra`
  // more bytes.
  void next_line(std::size_t extra);
  void close(char bracket);
  void raw(std::string_view text);  // bytes that need no escaping
  // Makes room for `n` more bytes at buf_[len_]: flushes to the sink when the buffer is full,
  // grows it when one piece is larger than the buffer (or when there is no sink).
  void reserve(std::size_t n) {
    if (len_ + n > buf_.size()) make_room(n);
  }
  void make_room(std::size_t n);
  // Passes buf_[0, len_) on (through the handover, or a copy through the sink) and empties it.
  void pass_on();
  char* cursor() noexcept { return buf_.data() + len_; }
  void put(char c) noexcept { buf_[len_++] = c; }  // after reserve()
  Sink sink_;
  Handover handover_;
  std::size_t flush_at_;
  bool compact_ = false;
  std::size_t pretty_mask_ = ~std::size_t{0};  // 0 in compact style: whitespace lengths vanish
  // The text is written through a raw cursor into a pre-sized buffer (buf_[0, len_) is used):
  // std::string::push_back/append per byte was half of the writer's instructions (callgrind).
  std::string buf_;
  std::size_t len_ = 0;
  struct Level {
    bool array;
    bool empty;
  };
  std::vector<Level> stack_;
  bool after_key_ = false;
  unsigned format_threads_ = 1;
  std::function<void(std::size_t)> elements_written_;
};

// Writes an object whose fields are numbered 0..N-1 in declaration order; in sorted mode they
// are visited in alphabetical order of `keys`. `field(i, key)` writes `key` and the value, or
// nothing to omit the field.
template <std::size_t N, typename Field>
void write_object(JsonStream& w, KeyOrder order, const std::array<std::string_view, N>& keys,
                  Field&& field);

// ---- implementation of the template ----------------------------------------------------------

namespace detail {
template <std::size_t N>
std::array<std::uint8_t, N> sorted_permutation(const std::array<std::string_view, N>& keys) {
  std::array<std::uint8_t, N> p{};
  for (std::size_t i = 0; i < N; ++i) p[i] = static_cast<std::uint8_t>(i);
  for (std::size_t i = 1; i < N; ++i)  // insertion sort: N is tiny
    for (std::size_t j = i; j > 0 && keys[p[j]] < keys[p[j - 1]]; --j) std::swap(p[j], p[j - 1]);
  return p;
}
}  // namespace detail

template <std::size_t N, typename Field>
void write_object(JsonStream& w, KeyOrder order, const std::array<std::string_view, N>& keys,
                  Field&& field) {
  w.begin_object();
  if (order == KeyOrder::sorted) {
    const std::array<std::uint8_t, N> p = detail::sorted_permutation(keys);
    for (std::size_t i = 0; i < N; ++i) field(p[i], keys[p[i]]);
  } else {
    for (std::size_t i = 0; i < N; ++i) field(i, keys[i]);
  }
  w.end_object();
}

}  // namespace candle_graph::output
