// The canonical-form scanner (see the header). Every step returns the position after what it
// read, or nullptr when the bytes are not exactly what the writer emits there; one nullptr
// anywhere makes the whole line a bail out, with nothing stored that the caller would use.
// Field names and order are trace6.md §4 in the writer's order (src/trace/writer.cpp); the values
// it accepts are the ones the simdjson path reads to the same result:
// - strings: bytes 0x20–0x7F except `"` and `\` (valid UTF-8, no unescaping: the simdjson path
//   uses such strings in place as well);
// - unsigned integers: `0` or [1-9][0-9]{0,18} (below 10^19, so no overflow check is needed; 20
//   digits, leading zeros, signs, fractions and exponents bail out);
// - the gradient norm: [0-9]+(\.[0-9]+)? with at most 19 digits, read by std::from_chars. Both
//   it and simdjson round correctly, so they give the same double;
// - enums through the same parse_* functions the simdjson path uses.
#include "trace/fast_line_scanner.hpp"

#include <charconv>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace candle_graph {
namespace {

using Kind = FastLineScanner::Kind;

// The literal's bytes at p (compile-time length: memcmp becomes a few compares).
template <std::size_t N>
inline const char* lit(const char* p, const char (&s)[N]) noexcept {
  if (p == nullptr || std::memcmp(p, s, N - 1) != 0) return nullptr;
  return p + (N - 1);
}

// A string's contents up to its closing quote; `p` is just after the opening quote.
inline const char* str(const char* p, std::string_view& out) noexcept {
  if (p == nullptr) return nullptr;
  const char* q = p;
#if defined(__SSE2__)
  // 16 bytes at a time: the first byte that is `"`, `\`, a control byte or ≥ 0x80 (negative as
  // a signed byte, so one signed compare against 0x20 finds both). The string ends at the
  // line's '\n' at the latest, so a load never reaches more than 15 bytes past it (64 are
  // readable there).
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'),
                space = _mm_set1_epi8(0x20);
  for (;;) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    const __m128i stop =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                     _mm_cmplt_epi8(v, space));
    const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(stop));
    if (mask != 0) {
      q += __builtin_ctz(mask);
      break;
    }
    q += 16;
  }
  if (*q != '"') return nullptr;  // an escape, a control byte or a non-ASCII byte
#else
  for (;;) {
    const unsigned char c = static_cast<unsigned char>(*q);
    if (c == '"') break;
    // Control bytes (including the line's own '\n') end the scan: the line bails out.
    if (c < 0x20 || c >= 0x80 || c == '\\') return nullptr;
    ++q;
  }
#endif
  out = std::string_view(p, static_cast<std::size_t>(q - p));
  return q + 1;
}

inline const char* u64(const char* p, std::uint64_t& out) noexcept {
  if (p == nullptr) return nullptr;
  unsigned d = static_cast<unsigned char>(*p) - unsigned{'0'};
  if (d > 9) return nullptr;
  if (d == 0) {  // a digit after it (`01`) is no valid follower: the next step bails out
    out = 0;
    return p + 1;
  }
  std::uint64_t v = d;
  const char* q = p + 1;
  for (int digits = 1;; ++digits) {
    d = static_cast<unsigned char>(*q) - unsigned{'0'};
    if (d > 9) break;
    if (digits == 19) return nullptr;  // 20 digits may exceed u64: simdjson decides
    v = v * 10 + d;
    ++q;
  }
  out = v;
  return q;
}

inline const char* boolean(const char* p, bool& out) noexcept {
  if (p == nullptr) return nullptr;
  if (std::memcmp(p, "true", 4) == 0) {
    out = true;
    return p + 4;
  }
  if (std::memcmp(p, "false", 5) == 0) {
    out = false;
    return p + 5;
  }
  return nullptr;
}

// A non-negative decimal without exponent, at most 19 digits (the form `append_f64` writes for
// ordinary norms); everything else goes to simdjson.
inline const char* f64(const char* p, double& out) noexcept {
  if (p == nullptr) return nullptr;
  const char* q = p;
  int digits = 0;
  if (*q == '0') {
    ++q, ++digits;
  } else {
    while (*q >= '0' && *q <= '9') ++q, ++digits;
    if (digits == 0) return nullptr;
  }
  if (*q == '.') {
    ++q;
    const int before = digits;
    while (*q >= '0' && *q <= '9') ++q, ++digits;
    if (digits == before) return nullptr;
  }
  if (digits > 19 || *q == 'e' || *q == 'E') return nullptr;
  const auto r = std::from_chars(p, q, out);
  if (r.ec != std::errc() || r.ptr != q) return nullptr;
  return q;
}

template <typename E>
inline const char* enum_str(const char* p, E& out,
                            std::optional<E> (*parse)(std::string_view) noexcept) noexcept {
  std::string_view s;
  p = str(p, s);
  if (p == nullptr) return nullptr;
  const std::optional<E> e = parse(s);
  if (!e) return nullptr;  // the simdjson path words the "unknown variant" error
  out = *e;
  return p;
}

// An optional field: absent (the writer omits it) or `key` followed by a value that `read`
// parses (u64 or str).
template <typename T, std::size_t N>
inline const char* opt_field(const char* p, const char (&key)[N], std::optional<T>& out,
                             const char* (*read)(const char*, T&) noexcept) noexcept {
  if (p == nullptr) return nullptr;
  if (std::memcmp(p, key, N - 1) != 0) {
    out.reset();
    return p;
  }
  T v{};
  p = read(p + (N - 1), v);
  out = v;
  return p;
}
template <std::size_t N>
inline const char* opt_u64(const char* p, const char (&key)[N],
                           std::optional<std::uint64_t>& out) noexcept {
  return opt_field(p, key, out, &u64);
}
template <std::size_t N>
inline const char* opt_str(const char* p, const char (&key)[N],
                           std::optional<std::string_view>& out) noexcept {
  return opt_field(p, key, out, &str);
}
inline const char* step_str(const char* p, ExecutionStep& out) noexcept {
  return enum_str(p, out, &parse_execution_step);
}
inline const char* op_kind_str(const char* p, OpKind& out) noexcept {
  return enum_str(p, out, &parse_op_kind);
}

}  // namespace

const char* FastLineScanner::dims(const char* p, std::span<const std::uint64_t>& out) {
  if (p == nullptr) return nullptr;
  dims_.clear();
  if (*p != ']') {
    for (;;) {
      std::uint64_t v = 0;
      p = u64(p, v);
      if (p == nullptr) return nullptr;
      dims_.push_back(v);
      if (*p == ']') break;
      if (*p != ',') return nullptr;
      ++p;
    }
  }
  out = dims_;
  return p + 1;
}

const char* FastLineScanner::strings(const char* p, std::span<const std::string_view>& out) {
  if (p == nullptr) return nullptr;
  ids_.clear();
  if (*p != ']') {
    for (;;) {
      if (*p != '"') return nullptr;
      std::string_view s;
      p = str(p + 1, s);
      if (p == nullptr) return nullptr;
      ids_.push_back(s);
      if (*p == ']') break;
      if (*p != ',') return nullptr;
      ++p;
    }
  }
  out = ids_;
  return p + 1;
}

// trace6.md §4.3
const char* FastLineScanner::scan_span_start(const char* p) {
  SpanStartEvent& e = span_start_;
  p = str(lit(p, ",\"id\":\""), e.id);
  p = opt_str(p, ",\"parent_id\":\"", e.parent_id);
  p = str(lit(p, ",\"name\":\""), e.name);
  p = u64(lit(p, ",\"start_ns\":"), e.start_ns);
  p = enum_str(lit(p, ",\"span_kind\":\""), e.span_kind, &parse_span_kind);
  p = boolean(lit(p, ",\"measured\":"), e.measured);
  return opt_field(p, ",\"step\":\"", e.step, &step_str);
}

// trace6.md §4.4
const char* FastLineScanner::scan_span_end(const char* p) {
  SpanEndEvent& e = span_end_;
  p = str(lit(p, ",\"id\":\""), e.id);
  return u64(lit(p, ",\"duration_ns\":"), e.duration_ns);
}

// trace6.md §4.5
const char* FastLineScanner::scan_op(const char* p) {
  OpEvent& e = op_;
  p = str(lit(p, ",\"span_id\":\""), e.span_id);
  p = str(lit(p, ",\"op_name\":\""), e.op_name);
  p = strings(lit(p, ",\"inputs\":["), e.inputs);
  p = opt_str(p, ",\"output\":\"", e.output);
  p = dims(lit(p, ",\"shape\":["), e.shape);
  p = str(lit(p, ",\"dtype\":\""), e.dtype);
  p = str(lit(p, ",\"device\":\""), e.device);
  p = u64(lit(p, ",\"duration_ns\":"), e.duration_ns);
  p = u64(lit(p, ",\"timestamp_ns\":"), e.timestamp_ns);
  p = opt_u64(p, ",\"storage_bytes\":", e.storage_bytes);
  p = opt_u64(p, ",\"input_storage_bytes\":", e.input_storage_bytes);
  // trace6.md §4.5.1, in the writer's order
  std::optional<OpKind> kind;
  p = opt_field(p, ",\"op_kind\":\"", kind, &op_kind_str);
  e.op_kind = kind.value_or(OpKind::host);
  p = opt_u64(p, ",\"total_ns\":", e.total_ns);
  p = is_device_kind(e.op_kind) ? opt_u64(p, ",\"stream\":", e.lane)
                                : opt_u64(p, ",\"thread\":", e.lane);
  return opt_u64(p, ",\"correlation\":", e.correlation);
}

// trace6.md §4.6
const char* FastLineScanner::scan_tensor(const char* p) {
  TensorEvent& e = tensor_;
  p = str(lit(p, ",\"span_id\":\""), e.span_id);
  p = str(lit(p, ",\"tensor_id\":\""), e.tensor_id);
  p = dims(lit(p, ",\"shape\":["), e.shape);
  p = str(lit(p, ",\"dtype\":\""), e.dtype);
  p = str(lit(p, ",\"device\":\""), e.device);
  p = boolean(lit(p, ",\"requires_grad\":"), e.requires_grad);
  p = opt_u64(p, ",\"storage_bytes\":", e.storage_bytes);
  return enum_str(lit(p, ",\"category\":\""), e.category, &parse_memory_category);
}

// trace6.md §4.7
const char* FastLineScanner::scan_memory(const char* p) {
  MemoryEvent& e = memory_;
  p = u64(lit(p, ",\"timestamp_ns\":"), e.timestamp_ns);
  p = str(lit(p, ",\"tensor_id\":\""), e.tensor_id);
  p = str(lit(p, ",\"span_id\":\""), e.span_id);
  p = opt_str(p, ",\"op_name\":\"", e.op_name);
  p = str(lit(p, ",\"device\":\""), e.device);
  p = u64(lit(p, ",\"bytes\":"), e.bytes);
  p = enum_str(lit(p, ",\"action\":\""), e.action, &parse_memory_action);
  p = dims(lit(p, ",\"shape\":["), e.shape);
  p = str(lit(p, ",\"dtype\":\""), e.dtype);
  return enum_str(lit(p, ",\"category\":\""), e.category, &parse_memory_category);
}

// trace6.md §4.8
const char* FastLineScanner::scan_device_memory(const char* p) {
  DeviceMemoryEvent& e = device_memory_;
  p = u64(lit(p, ",\"timestamp_ns\":"), e.timestamp_ns);
  p = str(lit(p, ",\"device\":\""), e.device);
  p = u64(lit(p, ",\"used_bytes\":"), e.used_bytes);
  p = u64(lit(p, ",\"free_bytes\":"), e.free_bytes);
  return opt_u64(p, ",\"reserved_bytes\":", e.reserved_bytes);
}

// trace6.md §4.9
const char* FastLineScanner::scan_gradient(const char* p) {
  GradientEvent& e = gradient_;
  p = str(lit(p, ",\"event_id\":\""), e.event_id);
  p = str(lit(p, ",\"root\":\""), e.root);
  p = str(lit(p, ",\"key\":\""), e.key);
  p = enum_str(lit(p, ",\"state\":\""), e.state, &parse_gradient_state);
  return opt_field(p, ",\"norm\":", e.norm, &f64);
}

// trace6.md §4.10
const char* FastLineScanner::scan_edge(const char* p) {
  EdgeEvent& e = edge_;
  p = str(lit(p, ",\"from_span\":\""), e.from_span);
  p = str(lit(p, ",\"to_span\":\""), e.to_span);
  return u64(lit(p, ",\"duration_ns\":"), e.duration_ns);
}

FastLineScanner::Result FastLineScanner::scan(const char* p) {
  constexpr Result kBail{Kind::none, nullptr};
  p = lit(p, "{\"kind\":\"");
  if (p == nullptr) return kBail;
  // The kind name with its closing quote, then that kind's fields. `meta` (once per file) is
  // left to the simdjson path.
  Kind kind = Kind::none;
  const char* q = nullptr;
  switch (*p) {
    case 'o':
      if ((q = lit(p, "op\""))) kind = Kind::op, q = scan_op(q);
      break;
    case 'm':
      if ((q = lit(p, "memory\""))) kind = Kind::memory, q = scan_memory(q);
      break;
    case 's':
      if ((q = lit(p, "span_start\"")))
        kind = Kind::span_start, q = scan_span_start(q);
      else if ((q = lit(p, "span_end\"")))
        kind = Kind::span_end, q = scan_span_end(q);
      break;
    case 't':
      if ((q = lit(p, "tensor\""))) kind = Kind::tensor, q = scan_tensor(q);
      break;
    case 'd':
      if ((q = lit(p, "device_memory\""))) kind = Kind::device_memory, q = scan_device_memory(q);
      break;
    case 'g':
      if ((q = lit(p, "gradient\""))) kind = Kind::gradient, q = scan_gradient(q);
      break;
    case 'e':
      if ((q = lit(p, "edge\""))) kind = Kind::edge, q = scan_edge(q);
      break;
    default:
      break;
  }
  // The object closes and the line ends right there (a CR before the '\n' is JSON whitespace
  // and what the per-line path trims).
  if (q == nullptr || *q != '}') return kBail;
  if (q[1] == '\n') return {kind, q + 2};
  if (q[1] == '\r' && q[2] == '\n') return {kind, q + 3};
  return kBail;
}

TraceEvent FastLineScanner::event(Kind kind) const {
  switch (kind) {
    case Kind::span_start:
      return span_start_;
    case Kind::span_end:
      return span_end_;
    case Kind::op:
      return op_;
    case Kind::tensor:
      return tensor_;
    case Kind::memory:
      return memory_;
    case Kind::device_memory:
      return device_memory_;
    case Kind::gradient:
      return gradient_;
    case Kind::edge:
      return edge_;
    case Kind::none:
      break;
  }
  return MetaEvent{};
}

}  // namespace candle_graph
