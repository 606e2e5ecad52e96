#include "instrument/event_line.hpp"

#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>

// The short-string vector path deliberately reads past a string's end (within its page), which
// AddressSanitizer rightly reports; sanitizer builds use the portable path instead.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)  // clang's spelling
#define CG_ADDRESS_SANITIZER 1
#endif
#endif
#if defined(__SSE2__) && !defined(__SANITIZE_ADDRESS__) && !defined(CG_ADDRESS_SANITIZER)
#define CG_SHORT_STRING_SSE2 1
#include <emmintrin.h>
#endif

#include "output/decimal.hpp"
#include "output/json_text.hpp"

namespace candle_graph::detail {
namespace {

constexpr std::size_t kLineCapacity = 16 * 1024;
// Worst case of one JSON string: every byte escaped as \u00XX, plus the quotes.
constexpr std::size_t kMaxStringGrowth = 6;
// Upper bound of everything that is not a caller string: field names, punctuation, numbers.
constexpr std::size_t kFixedBound = 1024;
constexpr std::size_t kNumberBound = 24;  // 20 digits of a u64, a comma, headroom
// The short-string path stores a whole 16-byte vector; this slack past the line bound keeps the
// bytes it writes beyond the string (overwritten by what follows) inside the buffer.
constexpr std::size_t kOvershoot = 64;

struct ThreadBuffers {
  std::string line;     // fast path: written through a pointer, sized once
  std::string slow;     // fallback for lines beyond kLineCapacity
  std::string scratch;  // the text of a float (gradient norms)
};

ThreadBuffers& buffers() {
  thread_local ThreadBuffers b = [] {
    ThreadBuffers t;
    t.line.resize(kLineCapacity + kOvershoot);
    t.scratch.reserve(1024);
    return t;
  }();
  return b;
}

std::size_t string_bound(std::string_view s) noexcept {
  return s.size() * kMaxStringGrowth + 2;
}

// A constant ASCII word (an enum string), quoted and padded to 16 bytes.
struct QuotedWord {
  char text[16];
  std::uint8_t size;
};

class Writer {
 public:
  explicit Writer(char* p) : begin_(p), p_(p) {}

  template <std::size_t N>
  Writer& lit(const char (&s)[N]) {
    std::memcpy(p_, s, N - 1);
    p_ += N - 1;
    return *this;
  }
  Writer& str(std::string_view s) {
#if defined(CG_SHORT_STRING_SSE2)
    // Strings of up to 16 bytes (ids, dtypes, devices, most names) in one vector: one load, one
    // escape test, one store. The load may read past the string only within its own 4 KiB page
    // (so it cannot fault); the bytes past it are masked out of the test, and the bytes stored
    // past it land in kOvershoot and are overwritten by the rest of the line.
    const std::uintptr_t page_offset = reinterpret_cast<std::uintptr_t>(s.data()) & 4095;
    // 1..16 bytes: an empty view may have a null data() that must not be read.
    if (s.size() - 1 < 16 && page_offset <= 4096 - 16) [[likely]] {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data()));
      // Signed compare: bytes >= 0x80 are negative, so `< 0x20` also catches non-ASCII.
      const __m128i bad = _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                                       _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                                    _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
      const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(bad)) &
                            ((1u << s.size()) - 1u);  // s.size() <= 16: no overflow
      if (mask == 0) [[likely]] {
        *p_ = '"';
        _mm_storeu_si128(reinterpret_cast<__m128i*>(p_ + 1), v);
        p_ += s.size() + 1;
        *p_++ = '"';
        return *this;
      }
    }
#endif
    // Longer strings, strings near a page end, strings needing escapes: the project's one JSON
    // string writer (word-at-a-time for plain ASCII), straight into the line.
    p_ = output::write_json_string(p_, s);
    return *this;
  }
  // A quoted enum word (16 bytes copied: the line buffer has kOvershoot bytes of slack).
  Writer& word(const QuotedWord& w) {
    std::memcpy(p_, w.text, 16);
    p_ += w.size;
    return *this;
  }
  // A session span id, "s<number>" (trace6.md §13.1): digits never need escaping.
  Writer& span_ref(std::uint64_t number) {
    *p_++ = '"';
    *p_++ = 's';
    p_ = output::write_decimal(p_, number);
    *p_++ = '"';
    return *this;
  }
  Writer& u64(std::uint64_t v) {
    p_ = output::write_decimal(p_, v);
    return *this;
  }
  Writer& f64(double v) {
    std::string& scratch = buffers().scratch;
    scratch.clear();
    output::append_f64(scratch, v);
    std::memcpy(p_, scratch.data(), scratch.size());
    p_ += scratch.size();
    return *this;
  }
  Writer& boolean(bool v) {
    return v ? lit("true") : lit("false");
  }
  Writer& dims(std::span<const std::uint64_t> v) {
    *p_++ = '[';
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i) *p_++ = ',';
      u64(v[i]);
    }
    *p_++ = ']';
    return *this;
  }
  Writer& strings(std::span<const std::string_view> v) {
    *p_++ = '[';
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i) *p_++ = ',';
      str(v[i]);
    }
    *p_++ = ']';
    return *this;
  }
  std::string_view done() {
    *p_++ = '\n';
    return {begin_, static_cast<std::size_t>(p_ - begin_)};
  }

 private:
  char* begin_;
  char* p_;
};

// Runs `write` on the fast buffer when `bound` fits, else formats with append_event_json.
template <typename Event, typename Write>
std::string_view format(const Event& e, std::size_t bound, Write&& write) {
  ThreadBuffers& b = buffers();
  if (bound <= kLineCapacity) [[likely]] {
    Writer w(b.line.data());
    write(w);
    return w.done();
  }
  b.slow.clear();
  append_event_json(b.slow, TraceEvent(e));
  b.slow.push_back('\n');
  return b.slow;
}

std::size_t strings_bound(std::span<const std::string_view> v) noexcept {
  std::size_t n = 0;
  for (std::string_view s : v) n += string_bound(s) + 1;
  return n;
}

// Enum strings of the span lines as QuotedWords: one 16-byte copy instead of a call to
// to_string and the escape check of str().
template <typename Enum, std::size_t N>
std::array<QuotedWord, N> quoted_words() {
  std::array<QuotedWord, N> words{};
  for (std::size_t i = 0; i < N; ++i) {
    const std::string_view w = to_string(static_cast<Enum>(i));
    words[i].text[0] = '"';
    std::memcpy(words[i].text + 1, w.data(), w.size());  // at most 14 bytes (asserted in tests)
    words[i].text[w.size() + 1] = '"';
    words[i].size = static_cast<std::uint8_t>(w.size() + 2);
  }
  return words;
}
const QuotedWord& quoted(SpanKind k) {
  static const auto words = quoted_words<SpanKind, 3>();
  return words[static_cast<std::size_t>(k)];
}
const QuotedWord& quoted(ExecutionStep s) {
  static const auto words = quoted_words<ExecutionStep, 3>();
  return words[static_cast<std::size_t>(s)];
}

// The span_start line's fields after its ids, shared by both entry points below.
void write_span_start_fields(Writer& w, std::string_view name, std::uint64_t start_ns,
                             SpanKind kind, bool measured, std::optional<ExecutionStep> step) {
  w.lit(R"(,"name":)").str(name).lit(R"(,"start_ns":)").u64(start_ns);
  w.lit(R"(,"span_kind":)").word(quoted(kind));
  w.lit(R"(,"measured":)").boolean(measured);
  if (step) w.lit(R"(,"step":)").word(quoted(*step));
  w.lit("}");
}

}  // namespace

std::string_view format_line(const SpanStartEvent& e) {
  const std::size_t bound = kFixedBound + string_bound(e.id) + string_bound(e.name) +
                            (e.parent_id ? string_bound(*e.parent_id) : 0);
  return format(e, bound, [&](Writer& w) {
    w.lit(R"({"kind":"span_start","id":)").str(e.id);
    if (e.parent_id) w.lit(R"(,"parent_id":)").str(*e.parent_id);
    write_span_start_fields(w, e.name, e.start_ns, e.span_kind, e.measured, e.step);
  });
}

std::string_view format_span_start_line(std::uint64_t number, std::uint64_t parent,
                                        std::string_view name, std::uint64_t start_ns,
                                        SpanKind kind, bool measured,
                                        std::optional<ExecutionStep> step) {
  if (kFixedBound + string_bound(name) <= kLineCapacity) [[likely]] {
    Writer w(buffers().line.data());
    w.lit(R"({"kind":"span_start","id":)").span_ref(number);
    w.lit(R"(,"parent_id":)").span_ref(parent);
    write_span_start_fields(w, name, start_ns, kind, measured, step);
    return w.done();
  }
  char id_buf[24], parent_buf[24];
  return format_line(SpanStartEvent{format_span_id(number, id_buf),
                                    format_span_id(parent, parent_buf), name, start_ns, kind,
                                    measured, step});
}

std::string_view format_line(const SpanEndEvent& e) {
  return format(e, kFixedBound + string_bound(e.id), [&](Writer& w) {
    w.lit(R"({"kind":"span_end","id":)").str(e.id);
    w.lit(R"(,"duration_ns":)").u64(e.duration_ns).lit("}");
  });
}

std::string_view format_span_end_line(std::uint64_t number, std::uint64_t duration_ns) {
  Writer w(buffers().line.data());  // a fixed, short line
  w.lit(R"({"kind":"span_end","id":)").span_ref(number);
  w.lit(R"(,"duration_ns":)").u64(duration_ns).lit("}");
  return w.done();
}

namespace {

// trace6.md §4.5.1 fields, in the trace writer's order; a recorded op is always a host op.
void write_op_extensions(Writer& w, const OpEvent& op) {
  if (op.op_kind != OpKind::host) w.lit(R"(,"op_kind":)").str(to_string(op.op_kind));
  if (op.total_ns) w.lit(R"(,"total_ns":)").u64(*op.total_ns);
  if (op.lane) w.lit(is_device_kind(op.op_kind) ? R"(,"stream":)" : R"(,"thread":)").u64(*op.lane);
  if (op.correlation) w.lit(R"(,"correlation":)").u64(*op.correlation);
}
void write_op_extensions(Writer& w, const OpRecord& op) {
  if (op.total_ns) w.lit(R"(,"total_ns":)").u64(*op.total_ns);
  if (op.thread) w.lit(R"(,"thread":)").u64(*op.thread);
}

// The op line's fields after span_id, shared by both entry points below.
template <typename Op>
void write_op_fields(Writer& w, const Op& op, std::uint64_t timestamp_ns,
                     std::optional<std::uint64_t> storage_bytes,
                     std::optional<std::uint64_t> input_storage_bytes) {
  w.lit(R"(,"op_name":)").str(op.op_name).lit(R"(,"inputs":)").strings(op.inputs);
  if (op.output) w.lit(R"(,"output":)").str(*op.output);
  w.lit(R"(,"shape":)").dims(op.shape).lit(R"(,"dtype":)").str(op.dtype);
  w.lit(R"(,"device":)").str(op.device).lit(R"(,"duration_ns":)").u64(op.duration_ns);
  w.lit(R"(,"timestamp_ns":)").u64(timestamp_ns);
  if (storage_bytes) w.lit(R"(,"storage_bytes":)").u64(*storage_bytes);
  if (input_storage_bytes) w.lit(R"(,"input_storage_bytes":)").u64(*input_storage_bytes);
  write_op_extensions(w, op);
  w.lit("}");
}

template <typename Op>
std::size_t op_bound(const Op& op) noexcept {
  return kFixedBound + string_bound(op.op_name) + strings_bound(op.inputs) +
         (op.output ? string_bound(*op.output) : 0) + op.shape.size() * kNumberBound +
         string_bound(op.dtype) + string_bound(op.device);
}

}  // namespace

std::string_view format_line(const OpEvent& e) {
  return format(e, op_bound(e) + string_bound(e.span_id), [&](Writer& w) {
    w.lit(R"({"kind":"op","span_id":)").str(e.span_id);
    write_op_fields(w, e, e.timestamp_ns, e.storage_bytes, e.input_storage_bytes);
  });
}

std::string_view format_op_line(std::uint64_t span_number, const OpRecord& op,
                                std::uint64_t timestamp_ns, std::uint64_t storage_bytes) {
  ThreadBuffers& b = buffers();
  if (op_bound(op) <= kLineCapacity) [[likely]] {
    Writer w(b.line.data());
    w.lit(R"({"kind":"op","span_id":)").span_ref(span_number);
    write_op_fields(w, op, timestamp_ns, storage_bytes, op.input_storage_bytes);
    return w.done();
  }
  // Multi-KiB strings: the general path, through the event the trace writer formats.
  char id_buf[24];
  const OpEvent e{format_span_id(span_number, id_buf),
                  op.op_name,
                  op.inputs,
                  op.output,
                  op.shape,
                  op.dtype,
                  op.device,
                  op.duration_ns,
                  timestamp_ns,
                  storage_bytes,
                  op.input_storage_bytes,
                  OpKind::host,
                  op.total_ns,
                  op.thread,
                  std::nullopt};
  return format_line(e);
}

std::string_view format_line(const TensorEvent& e) {
  const std::size_t bound = kFixedBound + string_bound(e.span_id) + string_bound(e.tensor_id) +
                            e.shape.size() * kNumberBound + string_bound(e.dtype) +
                            string_bound(e.device);
  return format(e, bound, [&](Writer& w) {
    w.lit(R"({"kind":"tensor","span_id":)").str(e.span_id);
    w.lit(R"(,"tensor_id":)").str(e.tensor_id).lit(R"(,"shape":)").dims(e.shape);
    w.lit(R"(,"dtype":)").str(e.dtype).lit(R"(,"device":)").str(e.device);
    w.lit(R"(,"requires_grad":)").boolean(e.requires_grad);
    if (e.storage_bytes) w.lit(R"(,"storage_bytes":)").u64(*e.storage_bytes);
    w.lit(R"(,"category":)").str(to_string(e.category)).lit("}");
  });
}

std::string_view format_line(const MemoryEvent& e) {
  const std::size_t bound = kFixedBound + string_bound(e.tensor_id) + string_bound(e.span_id) +
                            (e.op_name ? string_bound(*e.op_name) : 0) + string_bound(e.device) +
                            e.shape.size() * kNumberBound + string_bound(e.dtype);
  return format(e, bound, [&](Writer& w) {
    w.lit(R"({"kind":"memory","timestamp_ns":)").u64(e.timestamp_ns);
    w.lit(R"(,"tensor_id":)").str(e.tensor_id).lit(R"(,"span_id":)").str(e.span_id);
    if (e.op_name) w.lit(R"(,"op_name":)").str(*e.op_name);
    w.lit(R"(,"device":)").str(e.device).lit(R"(,"bytes":)").u64(e.bytes);
    w.lit(R"(,"action":)").str(to_string(e.action)).lit(R"(,"shape":)").dims(e.shape);
    w.lit(R"(,"dtype":)").str(e.dtype).lit(R"(,"category":)").str(to_string(e.category));
    w.lit("}");
  });
}

std::string_view format_line(const DeviceMemoryEvent& e) {
  return format(e, kFixedBound + string_bound(e.device), [&](Writer& w) {
    w.lit(R"({"kind":"device_memory","timestamp_ns":)").u64(e.timestamp_ns);
    w.lit(R"(,"device":)").str(e.device).lit(R"(,"used_bytes":)").u64(e.used_bytes);
    w.lit(R"(,"free_bytes":)").u64(e.free_bytes);
    if (e.reserved_bytes) w.lit(R"(,"reserved_bytes":)").u64(*e.reserved_bytes);
    w.lit("}");
  });
}

std::string_view format_line(const GradientEvent& e) {
  const std::size_t bound =
      kFixedBound + string_bound(e.event_id) + string_bound(e.root) + string_bound(e.key);
  return format(e, bound, [&](Writer& w) {
    w.lit(R"({"kind":"gradient","event_id":)").str(e.event_id);
    w.lit(R"(,"root":)").str(e.root).lit(R"(,"key":)").str(e.key);
    w.lit(R"(,"state":)").str(to_string(e.state));
    if (e.norm) w.lit(R"(,"norm":)").f64(*e.norm);
    w.lit("}");
  });
}

std::string_view format_line(const EdgeEvent& e) {
  return format(e, kFixedBound + string_bound(e.from_span) + string_bound(e.to_span),
                [&](Writer& w) {
                  w.lit(R"({"kind":"edge","from_span":)").str(e.from_span);
                  w.lit(R"(,"to_span":)").str(e.to_span);
                  w.lit(R"(,"duration_ns":)").u64(e.duration_ns).lit("}");
                });
}

std::string_view format_span_id(std::uint64_t n, char* buf) noexcept {
  buf[0] = 's';
  auto r = std::to_chars(buf + 1, buf + 24, n);
  return {buf, static_cast<std::size_t>(r.ptr - buf)};
}

}  // namespace candle_graph::detail
