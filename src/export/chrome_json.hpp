// The text writer of the Chrome export: flat event objects, one per line, as the elements of the
// traceEvents array (chrome.md §5). The export writes a few hundred thousand events per 100 MB
// of trace, so this is its hot path: text goes straight into one fixed buffer (handed to the sink
// whenever it fills, in ~1 MiB pieces), schema keys are literals copied with a length known at
// compile time, and timestamps take a short path (to_us_text) instead of the general shortest
// round-trip conversion. Strings are escaped by output::write_json_string and the other numbers
// match output/json_text, so the bytes are those of output::JsonLines.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace candle_graph::exporting {

// Writes `v` as the shortest text that reads back as `v`, laid out like output::append_f64
// (ryu's `117.708`, `0.001`, `13.0`), when `v` is the double nearest to k / 1000 or k / 10^4 for
// an integer 0 ≤ k < 10^15, as every µs value converted from nanoseconds (and the midpoint of
// two) is. Then the digits are those of k with the point three or four places from the right: a
// decimal of at most 15 significant digits is the only one of its length or shorter that reads
// back as that double (DBL_DIG = 15), so it is what a shortest round-trip conversion finds.
// Returns nullptr (nothing written) for any other value; `out` needs room for 20 bytes.
char* write_us_fast(char* out, double v) noexcept;

class ChromeJson {
 public:
  using Sink = std::function<void(std::string_view)>;
  // Takes a whole buffer of text instead of a copy of it: the buffer's contents move on and
  // `text` is left empty, holding a spare buffer (or none) for the caller to fill again.
  using Handover = std::function<void(std::string& text)>;
  static constexpr std::size_t kPiece = std::size_t{1} << 20;
  // Longer values (a huge name) go to the sink on their own, after what is buffered.
  static constexpr std::size_t kLargeValue = kPiece / 8;

  // `after_element`: the text continues an array that already holds an element, so the first
  // element written here starts with the separator (a batch formatted on another thread).
  // `piece_buffer`: kPiece bytes the writer may use (reused across writers), else its own.
  explicit ChromeJson(Sink sink, bool after_element = false, char* piece_buffer = nullptr);

  // Elements were written to this array by other writers (batches): the next begins with `,`.
  void continue_after_element() { first_ = false; }
  bool wrote_element() const noexcept { return !first_; }

  // Starts the next element: the separator from the previous one (`\n` before the first), `{`
  // and `first`, the JSON text of the object's first member (`"ph":"X"`).
  void begin(std::string_view first) {
    room(first.size() + 3);
    if (first_) {
      put("\n{");
      first_ = false;
    } else {
      put(",\n{");
    }
    copy(first);
  }
  void end() { lit("}"); }

  // `,"key":` for a schema key (plain ASCII, not escaped).
  template <std::size_t N>
  ChromeJson& key(const char (&k)[N]) {
    room(N + 3);
    put(",\"");
    put(k);
    put("\":");
    return *this;
  }
  // The first member of a nested object: no comma.
  template <std::size_t N>
  ChromeJson& first_key(const char (&k)[N]) {
    room(N + 2);
    put("\"");
    put(k);
    put("\":");
    return *this;
  }
  ChromeJson& first_key(std::string_view k) {  // a key that is data (a memory category)
    room(k.size() + 3);
    put("\"");
    copy(k);
    put("\":");
    return *this;
  }
  // JSON text written elsewhere (literals: `{`, `"t"`, `]`).
  template <std::size_t N>
  ChromeJson& lit(const char (&s)[N]) {
    room(N);
    put(s);
    return *this;
  }
  void raw(std::string_view s) {
    if (s.size() > kLargeValue) return pass_large(s);
    room(s.size());
    copy(s);
  }
  void str(std::string_view s);
  void u64(std::uint64_t v);
  // A double as output::append_f64 writes it (µs values take the short path).
  void f64(double v);
  // The text f64(v) writes, valid until the next call: for a value written more than once.
  std::string_view f64_text(double v);
  void boolean(bool v) {
    if (v)
      lit("true");
    else
      lit("false");
  }

  // JSON text formatted elsewhere into a buffer of its own (a batch): passed on whole through
  // the handover when there is one (no copy), else through the sink; `text` is left empty.
  void hand_over(std::string& text);
  void set_handover(Handover handover) { handover_ = std::move(handover); }

  // Hands what is buffered to the sink.
  void flush();
  std::uint64_t bytes() const noexcept { return flushed_ + static_cast<std::uint64_t>(at_ - buf_); }

 private:
  void room(std::size_t n) {  // n ≤ kPiece
    if (static_cast<std::size_t>(end_ - at_) < n) flush();
  }
  void pass_large(std::string_view text);
  template <std::size_t N>
  void put(const char (&s)[N]) {  // the caller made room
    std::memcpy(at_, s, N - 1);
    at_ += N - 1;
  }
  void copy(std::string_view s) {  // the caller made room
    if (s.empty()) return;  // an empty view may hold a null pointer, which memcpy must not get
    std::memcpy(at_, s.data(), s.size());
    at_ += s.size();
  }

  Sink sink_;
  Handover handover_;
  std::unique_ptr<char[]> storage_;
  char* buf_ = nullptr;
  char* at_ = nullptr;
  char* end_ = nullptr;
  bool first_ = true;
  std::uint64_t flushed_ = 0;
  std::string scratch_;  // a double off the short path, or a large string, before it is passed on
  char number_[24];      // f64_text's short path
};

}  // namespace candle_graph::exporting
