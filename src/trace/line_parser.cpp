// simdjson On-Demand over one line, or over a batch of whole lines (parse_batch, at the end).
// The kind is looked up first (it is the first field in everything producers write, so that
// costs one field), then the object is rewound and every field is visited exactly once with the
// handler of that kind.
//
// Built twice: as is (simdjson's portable "fallback" On-Demand) and with CG_PARSER_HASWELL (its
// AVX2 "haswell" On-Demand); line_parser_select.cpp picks one at run time.
#include "trace/line_parser.hpp"

#include <algorithm>
#include <cstring>

#include "output/json_text.hpp"
#include "trace/event_sink.hpp"

#if defined(CG_PARSER_HASWELL)
// The AVX2 variant is compiled *without* -mavx2: a TU built with it emits every inline function
// and template instantiation it uses (std::string, Error, ...) as a weak COMDAT copy built for
// AVX2, and the linker may keep that copy for the whole program, so portable code would run AVX2
// on a CPU without it (SIGILL). Instead only the functions declared after the target pragma
// below are built for AVX2, the way simdjson builds its own kernels (SIMDJSON_TARGET_REGION).
// Functions declared before it stay portable, including templates instantiated after it (GCC
// and clang take the target from the declaration) and, with GCC, implicitly declared members
// (the pragma does not reach them), hence every header simdjson.h includes is included first.
// Declared after it: simdjson.h itself (its haswell namespace is used by haswell code only, and
// none of its generic inlines ends up out of line), our code in an anonymous namespace (local
// symbols: no copy can escape) and make_line_parser_haswell(), called only once the CPU passed the
// check. tests/portability/ fails if the object exports AVX2 code in any other function.
#include <atomic>
#include <cassert>
#include <cfloat>
#include <cinttypes>
#include <climits>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iomanip>
#include <iterator>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <ranges>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <cpuid.h>
#include <strings.h>
#include <x86intrin.h>

// On-Demand exists for one implementation per TU, the "builtin" one: ask for haswell (with
// portable compiler flags simdjson would pick fallback).
#define SIMDJSON_BUILTIN_IMPLEMENTATION haswell
// Plain `inline` instead of simdjson's always_inline (its own choice at -O0): std templates keep
// the portable target of their declaration, and GCC refuses to force-inline AVX2 code into them
// (std::pair's constructor under od::field, say) or into implicitly declared members. The
// inlining budget CMakeLists.txt gives this object makes up for it (docs/performance.md, "AVX2
// parser build": fewer instructions than the old -mavx2 build).
#define simdjson_inline inline
#define CG_PARSER_VARIANT haswell
// The features line_parser_select.cpp checks (simdjson's haswell kernel needs a subset).
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,bmi,bmi2,pclmul,popcnt,lzcnt"))), \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,bmi,bmi2,pclmul,popcnt,lzcnt")
#endif
#else
#define CG_PARSER_VARIANT fallback
#endif

#include <simdjson.h>

#define CG_CAT2(a, b) a##b
#define CG_CAT(a, b) CG_CAT2(a, b)

namespace candle_graph {
// Internal linkage for all of it: the two variants' classes stay distinct, and none of the AVX2
// variant's code can be picked by the linker for another TU.
namespace {
namespace od = simdjson::ondemand;

constexpr int kMaxUnknownDepth = 256;  // nesting allowed inside ignored fields

// Key comparison against a literal with a compile-time length, so the compiler inlines it
// (string_view's operator== goes through a run-time-length memcmp call on every field).
template <std::size_t N>
inline bool is(std::string_view k, const char (&literal)[N]) noexcept {
  return k.size() == N - 1 && std::memcmp(k.data(), literal, N - 1) == 0;
}

// A hostile string made safe and short for an error message: JSON-quoted, at most ~64 bytes.
std::string quote_for_message(std::string_view s) {
  std::string out;
  if (s.size() > 64) {
    std::size_t cut = 64;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    output::append_json_string(out, s.substr(0, cut));
    out.insert(out.size() - 1, "…");
  } else {
    output::append_json_string(out, s);
  }
  return out;
}

// One line per error code, read as a table.
// clang-format off
std::string describe_error(simdjson::error_code e) {
  switch (e) {
    case simdjson::UTF8_ERROR: return "invalid UTF-8 in the line";
    case simdjson::DEPTH_ERROR: return "JSON nested too deeply";
    case simdjson::UNCLOSED_STRING: return "invalid JSON: unterminated string";
    case simdjson::STRING_ERROR: return "invalid JSON: bad string escape or control character";
    case simdjson::NUMBER_ERROR: return "invalid JSON: malformed number";
    case simdjson::T_ATOM_ERROR:
    case simdjson::F_ATOM_ERROR:
    case simdjson::N_ATOM_ERROR: return "invalid JSON: unexpected literal";
    case simdjson::CAPACITY: return "line too large to parse";
    case simdjson::MEMALLOC: return "out of memory while parsing the line";
    default: return std::string("invalid JSON: ") + simdjson::error_message(e);
  }
}
// clang-format on

struct Impl {
  od::parser parser;
  std::vector<std::string_view> ids;
  std::vector<std::uint64_t> dims;
  std::vector<Tag> tags;
  std::vector<ProfilerStepRecord> steps;
  OpCollective collective;  // the op's, until the assembler copies it
  TraceEvent event;
  std::string_view source;
  std::uint64_t line_number = 0;
  std::string_view kind_name;  // for messages
  int kind_fields = 0;

  [[noreturn]] void fail(std::string message) const {
    throw Error(std::string(source), line_number, std::move(message));
  }
  void check(simdjson::error_code e) const {
    if (e) fail(describe_error(e));
  }

  std::string found(od::value& v) {
    od::json_type t;
    if (v.type().get(t)) return "invalid JSON";
    switch (t) {
      case od::json_type::array:
        return "an array";
      case od::json_type::object:
        return "an object";
      case od::json_type::string:
        return "a string";
      case od::json_type::boolean:
        return "a boolean";
      case od::json_type::null:
        return "null";
      case od::json_type::number: {
        std::string_view tok = v.raw_json_token();
        while (!tok.empty() && (tok.back() == ' ' || tok.back() == '\t')) tok.remove_suffix(1);
        std::string shown(tok.substr(0, 40));
        if (!tok.empty() && tok.front() == '-') return "the negative number " + shown;
        if (tok.find_first_of(".eE") != std::string_view::npos)
          return "the floating-point number " + shown;
        return "the number " + shown + " (beyond 64 bits)";
      }
    }
    return "an unexpected value";
  }

  [[noreturn]] void type_fail(std::string_view field, od::value& v, std::string_view expected,
                              simdjson::error_code err) {
    if (err != simdjson::INCORRECT_TYPE && err != simdjson::NUMBER_OUT_OF_RANGE &&
        err != simdjson::NUMBER_ERROR)
      fail(describe_error(err));
    if (err == simdjson::NUMBER_ERROR) {
      // Not a type mismatch: the text is no valid JSON number (`00`) or no double holds it
      // (`1e400`).
      std::string_view tok = v.raw_json_token();
      while (!tok.empty() && is_json_space(tok.back())) tok.remove_suffix(1);
      fail("invalid value for field `" + std::string(field) + "` in " + std::string(kind_name) +
           " event: malformed or out-of-range number " + std::string(tok.substr(0, 40)));
    }
    fail("invalid type for field `" + std::string(field) + "` in " + std::string(kind_name) +
         " event: expected " + std::string(expected) + ", found " + found(v));
  }

  std::string_view str(od::value& v, std::string_view field) {
    // Fast path: a string without escapes is used in place (no unescaping copy); the value is
    // left unconsumed and the field iteration skips it.
    std::string_view tok = v.raw_json_token();
    while (!tok.empty() && is_json_space(tok.back())) tok.remove_suffix(1);
    if (tok.size() >= 2 && tok.front() == '"' && tok.back() == '"') {
      const std::string_view inner = tok.substr(1, tok.size() - 2);
      if (inner.find('\\') == std::string_view::npos) return inner;
    }
    std::string_view s;
    if (auto err = v.get_string().get(s)) type_fail(field, v, "a string", err);
    return s;
  }
  std::uint64_t u64(od::value& v, std::string_view field) {
    std::uint64_t x;
    if (auto err = v.get_uint64().get(x)) type_fail(field, v, "an unsigned 64-bit integer", err);
    return x;
  }
  bool boolean(od::value& v, std::string_view field) {
    bool b;
    if (auto err = v.get_bool().get(b)) type_fail(field, v, "a boolean", err);
    return b;
  }
  bool is_null(od::value& v) {
    bool n = false;
    return !v.is_null().get(n) && n;
  }
  std::optional<std::string_view> opt_str(od::value& v, std::string_view field) {
    if (is_null(v)) return std::nullopt;
    return str(v, field);
  }
  std::optional<std::uint64_t> opt_u64(od::value& v, std::string_view field) {
    if (is_null(v)) return std::nullopt;
    return u64(v, field);
  }
  std::optional<double> opt_f64(od::value& v, std::string_view field) {
    if (is_null(v)) return std::nullopt;
    double d;
    if (auto err = v.get_double().get(d)) type_fail(field, v, "a number", err);
    return d;
  }
  template <typename E>
  E enum_value(od::value& v, std::string_view field, std::optional<E> (*parse)(std::string_view),
               std::string_view expected) {
    const std::string_view s = str(v, field);
    if (auto e = parse(s)) return *e;
    fail("invalid value for field `" + std::string(field) + "` in " + std::string(kind_name) +
         " event: unknown variant " + quote_for_message(s) + ", expected one of " +
         std::string(expected));
  }

  std::span<const std::uint64_t> shape(od::value& v, std::string_view field) {
    dims.clear();
    od::array arr;
    if (auto err = v.get_array().get(arr))
      type_fail(field, v, "an array of unsigned integers", err);
    for (auto item : arr) {
      od::value x;
      check(std::move(item).get(x));
      dims.push_back(u64(x, field));
    }
    return dims;
  }
  std::span<const std::string_view> string_list(od::value& v, std::string_view field) {
    ids.clear();
    od::array arr;
    if (auto err = v.get_array().get(arr)) type_fail(field, v, "an array of strings", err);
    for (auto item : arr) {
      od::value x;
      check(std::move(item).get(x));
      ids.push_back(str(x, field));
    }
    return ids;
  }
  // trace6.md §4.2.1: [{step, wall_ns, device_busy_ns}, ...]
  std::span<const ProfilerStepRecord> step_list(od::value& v, std::string_view field) {
    steps.clear();
    od::array arr;
    if (auto err = v.get_array().get(arr)) type_fail(field, v, "an array of steps", err);
    for (auto item : arr) {
      od::value x;
      check(std::move(item).get(x));
      od::object obj;
      if (auto err = x.get_object().get(obj)) type_fail(field, x, "a step object", err);
      ProfilerStepRecord r;
      std::uint64_t seen = 0;
      for (auto f : obj) {
        od::field fl;
        check(std::move(f).get(fl));
        const std::string_view key = key_of(fl);
        od::value y = fl.value();
        if (key == "step")
          seen |= 1, r.step = u64(y, "profiler_steps[].step");
        else if (key == "wall_ns")
          seen |= 2, r.wall_ns = u64(y, "profiler_steps[].wall_ns");
        else if (key == "device_busy_ns")
          seen |= 4, r.device_busy_ns = u64(y, "profiler_steps[].device_busy_ns");
        else
          consume_any(y, 0);
      }
      if (seen != 7) fail("a profiler step needs step, wall_ns and device_busy_ns");
      steps.push_back(r);
    }
    return steps;
  }

  std::span<const Tag> tag_map(od::value& v, std::string_view field) {
    tags.clear();
    od::object obj;
    if (auto err = v.get_object().get(obj)) type_fail(field, v, "an object of strings", err);
    for (auto f : obj) {
      od::field fl;
      check(std::move(f).get(fl));
      std::string_view key;
      check(fl.unescaped_key().get(key));
      od::value x = fl.value();
      tags.push_back(Tag{key, str(x, field)});
    }
    return tags;
  }

  static bool is_json_space(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
  }

  // A field's key, read in place when it has no escapes (the common case).
  std::string_view key_of(od::field& fl) {
    const char* p = reinterpret_cast<const char*>(fl.key().raw());
    const char* q = p;
    while (*q != '"' && *q != '\\') ++q;
    if (*q == '"') return {p, static_cast<std::size_t>(q - p)};
    std::string_view key;
    check(fl.unescaped_key().get(key));
    return key;
  }

  // Ignored fields are still walked so that malformed JSON inside them is an error.
  void consume_any(od::value v, int depth) {
    if (depth > kMaxUnknownDepth) fail("JSON nested too deeply (an ignored field)");
    od::json_type t{};  // set by get(); {} keeps GCC's flow analysis quiet
    check(v.type().get(t));
    switch (t) {
      case od::json_type::array: {
        od::array arr;
        check(v.get_array().get(arr));
        for (auto item : arr) {
          od::value x;
          check(std::move(item).get(x));
          consume_any(x, depth + 1);
        }
        break;
      }
      case od::json_type::object: {
        od::object obj;
        check(v.get_object().get(obj));
        for (auto f : obj) {
          od::field fl;
          check(std::move(f).get(fl));
          std::string_view key;
          check(fl.unescaped_key().get(key));
          consume_any(fl.value(), depth + 1);
        }
        break;
      }
      case od::json_type::string: {
        std::string_view s;
        check(v.get_string().get(s));
        break;
      }
      case od::json_type::number: {
        od::number n;
        if (v.get_number().get(n)) {
          double d;  // integers beyond 64 bits are valid JSON: accept them as doubles
          check(v.get_double().get(d));
        }
        break;
      }
      case od::json_type::boolean: {
        bool b = false;
        check(v.get_bool().get(b));
        break;
      }
      case od::json_type::null: {
        bool n = false;
        check(v.is_null().get(n));
        if (!n) fail("invalid JSON: unexpected literal");
        break;
      }
    }
  }

  // Visits every field; `handle(key, value)` returns false for fields it does not know.
  // The fields still to visit. When `kind` was the first field it has already been read.
  struct Fields {
    od::object_iterator it;
    od::object_iterator end;
  };

  template <typename Handler>
  void for_each_field(Fields& fs, Handler&& handle) {
    for (; fs.it != fs.end; ++fs.it) {
      od::field fl;
      check((*fs.it).get(fl));
      const std::string_view key = key_of(fl);
      od::value v = fl.value();
      if (is(key, "kind")) {
        if (++kind_fields > 1) fail("duplicate field `kind`");
        str(v, key);
        continue;
      }
      if (!handle(key, v)) consume_any(v, 0);
    }
  }

  // Field bookkeeping: duplicates are errors, required fields must be present.
  struct Seen {
    Impl* self;
    std::uint64_t bits = 0;
    // Inline on the hot path (one out-of-line call per field was 1.4% of the reader's
    // instructions); the message is built out of line.
    inline __attribute__((always_inline)) void mark(int bit, std::string_view field) {
      const std::uint64_t m = std::uint64_t{1} << bit;
      if (bits & m) [[unlikely]]
        duplicate(field);
      bits |= m;
    }
    [[noreturn]] __attribute__((noinline, cold)) void duplicate(std::string_view field) const {
      self->fail("duplicate field `" + std::string(field) + "` in " + std::string(self->kind_name) +
                 " event");
    }
    void require(int bit, std::string_view field) const {
      if (!(bits & (std::uint64_t{1} << bit)))
        self->fail("missing field `" + std::string(field) + "` in " + std::string(self->kind_name) +
                   " event");
    }
  };

  void parse_meta(Fields& fs);
  void parse_span_start(Fields& fs);
  void parse_span_end(Fields& fs);
  void parse_op(Fields& fs);
  void parse_tensor(Fields& fs);
  void parse_memory(Fields& fs);
  void parse_device_memory(Fields& fs);
  void parse_gradient(Fields& fs);
  void parse_edge(Fields& fs);
};

// Field tables: a macro would hide the control flow, so each kind spells its fields out.
// Bits are positions in Seen; names are the wire names of trace6.md §4.

// One line per field, read as a table.
// clang-format off
void Impl::parse_meta(Fields& fs) {
  MetaEvent e;
  Seen seen{this};
  std::span<const Tag> tag_view;
  for_each_field(fs, [&](std::string_view k, od::value& v) {
    auto& r = e.run;
    if (is(k, "schema")) seen.mark(0, k), e.schema = str(v, k);
    else if (is(k, "run_id")) seen.mark(1, k), r.run_id = str(v, k);
    else if (is(k, "correlation_id")) seen.mark(2, k), r.correlation_id = str(v, k);
    else if (is(k, "entrypoint")) seen.mark(3, k), r.entrypoint = str(v, k);
    else if (is(k, "phase"))
      seen.mark(4, k), r.phase = enum_value(v, k, &parse_execution_phase, "`train`, `infer`");
    else if (is(k, "timestamp")) seen.mark(5, k), r.timestamp = str(v, k);
    else if (is(k, "capture_step")) seen.mark(6, k), r.capture_step = u64(v, k);
    else if (is(k, "warmup_steps")) seen.mark(7, k), r.warmup_steps = u64(v, k);
    else if (is(k, "device")) seen.mark(8, k), r.device = str(v, k);
    else if (is(k, "measured_region_device_synchronized"))
      seen.mark(9, k), r.measured_region_device_synchronized = boolean(v, k);
    else if (is(k, "timing_mode"))
      seen.mark(10, k), r.timing_mode = enum_value(v, k, &parse_timing_mode,
                                                   "`host`, `device_synchronized`");
    else if (is(k, "tags")) seen.mark(11, k), tag_view = tag_map(v, k);
    else if (is(k, "candle_version")) seen.mark(12, k), r.candle_version = opt_str(v, k);
    else if (is(k, "profiler_steps")) seen.mark(13, k), r.profiler_steps = step_list(v, k);
    else return false;
    return true;
  });
  static constexpr std::pair<int, std::string_view> kRequired[] = {
      {0, "schema"}, {1, "run_id"}, {2, "correlation_id"}, {3, "entrypoint"},
      {4, "phase"},  {5, "timestamp"}, {6, "capture_step"}, {7, "warmup_steps"},
      {8, "device"}, {10, "timing_mode"}, {11, "tags"}};
  for (auto [bit, name] : kRequired) seen.require(bit, name);
  e.run.tags = tag_view;
  event = e;
}

void Impl::parse_span_start(Fields& fs) {
  SpanStartEvent e;
  Seen seen{this};
  for_each_field(fs, [&](std::string_view k, od::value& v) {
    if (is(k, "id")) seen.mark(0, k), e.id = str(v, k);
    else if (is(k, "parent_id")) seen.mark(1, k), e.parent_id = opt_str(v, k);
    else if (is(k, "name")) seen.mark(2, k), e.name = str(v, k);
    else if (is(k, "start_ns")) seen.mark(3, k), e.start_ns = u64(v, k);
    else if (is(k, "span_kind"))
      seen.mark(4, k), e.span_kind = enum_value(v, k, &parse_span_kind,
                                                "`function`, `op`, `module`");
    else if (is(k, "measured")) seen.mark(5, k), e.measured = boolean(v, k);
    else if (is(k, "step")) {
      seen.mark(6, k);
      if (!is_null(v))
        e.step = enum_value(v, k, &parse_execution_step, "`forward`, `backward`, `optimizer`");
    } else return false;
    return true;
  });
  seen.require(0, "id");
  seen.require(2, "name");
  seen.require(3, "start_ns");
  seen.require(4, "span_kind");
  event = e;
}

void Impl::parse_span_end(Fields& fs) {
  SpanEndEvent e;
  Seen seen{this};
  for_each_field(fs, [&](std::string_view k, od::value& v) {
    if (is(k, "id")) seen.mark(0, k), e.id = str(v, k);
    else if (is(k, "duration_ns")) seen.mark(1, k), e.duration_ns = u64(v, k);
    else return false;
    return true;
  });
  seen.require(0, "id");
  event = e;
}

void Impl::parse_op(Fields& fs) {
  OpEvent e;
  collective = {};
  Seen seen{this};
  for_each_field(fs, [&](std::string_view k, od::value& v) {
    if (is(k, "span_id")) seen.mark(0, k), e.span_id = str(v, k);
    else if (is(k, "op_name")) seen.mark(1, k), e.op_name = str(v, k);
    else if (is(k, "inputs")) seen.mark(2, k), e.inputs = string_list(v, k);
    else if (is(k, "output")) seen.mark(3, k), e.output = opt_str(v, k);
    else if (is(k, "shape")) seen.mark(4, k), e.shape = shape(v, k);
    else if (is(k, "dtype")) seen.mark(5, k), e.dtype = str(v, k);
    else if (is(k, "device")) seen.mark(6, k), e.device = str(v, k);
    else if (is(k, "duration_ns")) seen.mark(7, k), e.duration_ns = u64(v, k);
    else if (is(k, "timestamp_ns")) seen.mark(8, k), e.timestamp_ns = u64(v, k);
    else if (is(k, "storage_bytes")) seen.mark(9, k), e.storage_bytes = opt_u64(v, k);
    else if (is(k, "input_storage_bytes")) seen.mark(10, k), e.input_storage_bytes = opt_u64(v, k);
    // trace6.md §4.5.1 extensions
    else if (is(k, "op_kind"))
      seen.mark(11, k), e.op_kind = enum_value(v, k, &parse_op_kind,
                                               "`host`, `runtime`, `kernel`, `memcpy`, `memset`, "
                                               "`sync`");
    else if (is(k, "total_ns")) seen.mark(12, k), e.total_ns = opt_u64(v, k);
    else if (is(k, "thread") || is(k, "stream")) seen.mark(13, "thread` or `stream"), e.lane = opt_u64(v, k);
    else if (is(k, "correlation")) seen.mark(14, k), e.correlation = opt_u64(v, k);
    else if (is(k, "collective")) seen.mark(15, k), collective.name = str(v, k);
    else if (is(k, "process_group")) seen.mark(16, k), collective.process_group = str(v, k);
    else if (is(k, "collective_seq")) seen.mark(17, k), collective.seq = opt_u64(v, k);
    else return false;
    return true;
  });
  if (seen.bits & (std::uint64_t{7} << 15)) {
    seen.require(15, "collective");  // a group or a sequence number names a collective
    e.collective = &collective;
  }
  seen.require(0, "span_id");
  seen.require(1, "op_name");
  seen.require(5, "dtype");
  seen.require(6, "device");
  seen.require(7, "duration_ns");
  event = e;
}

void Impl::parse_tensor(Fields& fs) {
  TensorEvent e;
  Seen seen{this};
  for_each_field(fs, [&](std::string_view k, od::value& v) {
    if (is(k, "span_id")) seen.mark(0, k), e.span_id = str(v, k);
    else if (is(k, "tensor_id")) seen.mark(1, k), e.tensor_id = str(v, k);
    else if (is(k, "shape")) seen.mark(2, k), e.shape = shape(v, k);
    else if (is(k, "dtype")) seen.mark(3, k), e.dtype = str(v, k);
    else if (is(k, "device")) seen.mark(4, k), e.device = str(v, k);
    else if (is(k, "requires_grad")) seen.mark(5, k), e.requires_grad = boolean(v, k);
    else if (is(k, "storage_bytes")) seen.mark(6, k), e.storage_bytes = opt_u64(v, k);
    else if (is(k, "category"))
      seen.mark(7, k), e.category = enum_value(
                           v, k, &parse_memory_category,
                           "`parameter`, `activation`, `gradient`, `optimizer`, `other`");
    else return false;
    return true;
  });
  seen.require(0, "span_id");
  seen.require(1, "tensor_id");
  seen.require(3, "dtype");
  seen.require(4, "device");
  event = e;
}

void Impl::parse_memory(Fields& fs) {
  MemoryEvent e;
  Seen seen{this};
  for_each_field(fs, [&](std::string_view k, od::value& v) {
    if (is(k, "timestamp_ns")) seen.mark(0, k), e.timestamp_ns = u64(v, k);
    else if (is(k, "tensor_id")) seen.mark(1, k), e.tensor_id = str(v, k);
    else if (is(k, "span_id")) seen.mark(2, k), e.span_id = str(v, k);
    else if (is(k, "op_name")) seen.mark(3, k), e.op_name = opt_str(v, k);
    else if (is(k, "device")) seen.mark(4, k), e.device = str(v, k);
    else if (is(k, "bytes")) seen.mark(5, k), e.bytes = u64(v, k);
    else if (is(k, "action"))
      seen.mark(6, k), e.action = enum_value(v, k, &parse_memory_action, "`alloc`, `free`");
    else if (is(k, "shape")) seen.mark(7, k), e.shape = shape(v, k);
    else if (is(k, "dtype")) seen.mark(8, k), e.dtype = str(v, k);
    else if (is(k, "category"))
      seen.mark(9, k), e.category = enum_value(
                           v, k, &parse_memory_category,
                           "`parameter`, `activation`, `gradient`, `optimizer`, `other`");
    else return false;
    return true;
  });
  static constexpr std::pair<int, std::string_view> kRequired[] = {
      {0, "timestamp_ns"}, {1, "tensor_id"}, {2, "span_id"}, {4, "device"},
      {5, "bytes"},        {6, "action"},    {8, "dtype"}};
  for (auto [bit, name] : kRequired) seen.require(bit, name);
  event = e;
}

void Impl::parse_device_memory(Fields& fs) {
  DeviceMemoryEvent e;
  Seen seen{this};
  for_each_field(fs, [&](std::string_view k, od::value& v) {
    if (is(k, "timestamp_ns")) seen.mark(0, k), e.timestamp_ns = u64(v, k);
    else if (is(k, "device")) seen.mark(1, k), e.device = str(v, k);
    else if (is(k, "used_bytes")) seen.mark(2, k), e.used_bytes = u64(v, k);
    else if (is(k, "free_bytes")) seen.mark(3, k), e.free_bytes = u64(v, k);
    else if (is(k, "reserved_bytes")) seen.mark(4, k), e.reserved_bytes = opt_u64(v, k);
    else return false;
    return true;
  });
  seen.require(0, "timestamp_ns");
  seen.require(1, "device");
  seen.require(2, "used_bytes");
  seen.require(3, "free_bytes");
  event = e;
}

void Impl::parse_gradient(Fields& fs) {
  GradientEvent e;
  Seen seen{this};
  for_each_field(fs, [&](std::string_view k, od::value& v) {
    if (is(k, "event_id")) seen.mark(0, k), e.event_id = str(v, k);
    else if (is(k, "root")) seen.mark(1, k), e.root = str(v, k);
    else if (is(k, "key")) seen.mark(2, k), e.key = str(v, k);
    else if (is(k, "state"))
      seen.mark(3, k), e.state = enum_value(v, k, &parse_gradient_state,
                                            "`present`, `missing`, `zero`, `non_finite`");
    else if (is(k, "norm")) seen.mark(4, k), e.norm = opt_f64(v, k);
    else return false;
    return true;
  });
  seen.require(0, "event_id");
  seen.require(1, "root");
  seen.require(2, "key");
  seen.require(3, "state");
  event = e;
}

void Impl::parse_edge(Fields& fs) {
  EdgeEvent e;
  Seen seen{this};
  for_each_field(fs, [&](std::string_view k, od::value& v) {
    if (is(k, "from_span")) seen.mark(0, k), e.from_span = str(v, k);
    else if (is(k, "to_span")) seen.mark(1, k), e.to_span = str(v, k);
    else if (is(k, "duration_ns")) seen.mark(2, k), e.duration_ns = u64(v, k);
    else return false;
    return true;
  });
  seen.require(0, "from_span");
  seen.require(1, "to_span");
  seen.require(2, "duration_ns");
  event = e;
}
// clang-format on

class Backend final : public LineParserBackend {
 public:
  const TraceEvent& parse(std::string_view line, std::size_t capacity, std::string_view source,
                          std::uint64_t line_number) override;
  BatchResult parse_batch(const char* data, std::size_t size, std::uint64_t lines_before,
                          std::string_view source, EventSink& out) override;

 private:
  void parse_object(od::object obj);
  std::size_t batch_bytes() const noexcept;
  Impl impl_;
};

// Everything after the root object was found: the kind, then that kind's fields.
void Backend::parse_object(od::object obj) {
  Impl& p = impl_;
  // Producers write `kind` first: read it and carry on from the second field. Otherwise look
  // for it, then rewind and visit every field.
  Impl::Fields fs;
  p.check(obj.begin().get(fs.it));
  p.check(obj.end().get(fs.end));
  std::string_view kind;
  bool has_kind = false;
  if (fs.it != fs.end) {
    od::field fl;
    p.check((*fs.it).get(fl));
    if (is(p.key_of(fl), "kind")) {
      od::value v = fl.value();
      kind = p.str(v, "kind");
      has_kind = true;
      ++fs.it;
    }
  }
  p.kind_fields = has_kind ? 1 : 0;
  if (!has_kind) {
    bool rewound = false;
    p.check(obj.reset().get(rewound));
    for (auto f : obj) {
      od::field fl;
      p.check(std::move(f).get(fl));
      if (is(p.key_of(fl), "kind")) {
        od::value v = fl.value();
        kind = p.str(v, "kind");
        has_kind = true;
        break;
      }
    }
    if (!has_kind) p.fail("missing field `kind`");
    p.check(obj.reset().get(rewound));
    p.check(obj.begin().get(fs.it));
    p.check(obj.end().get(fs.end));
  }

  // One line per event kind.
  // clang-format off
  if (is(kind, "op")) p.kind_name = "op", p.parse_op(fs);
  else if (is(kind, "span_start")) p.kind_name = "span_start", p.parse_span_start(fs);
  else if (is(kind, "span_end")) p.kind_name = "span_end", p.parse_span_end(fs);
  else if (is(kind, "memory")) p.kind_name = "memory", p.parse_memory(fs);
  else if (is(kind, "tensor")) p.kind_name = "tensor", p.parse_tensor(fs);
  else if (is(kind, "device_memory")) p.kind_name = "device_memory", p.parse_device_memory(fs);
  else if (is(kind, "gradient")) p.kind_name = "gradient", p.parse_gradient(fs);
  else if (is(kind, "edge")) p.kind_name = "edge", p.parse_edge(fs);
  else if (is(kind, "meta")) p.kind_name = "meta", p.parse_meta(fs);
  else p.fail("unknown event kind " + quote_for_message(kind));
  // clang-format on
}

constexpr std::string_view kTrailing = "invalid JSON: trailing characters after the event object";

// Read as a stream of documents, whether `text` (readable to `capacity`) starts with one whole
// JSON object: nullopt when it does not, else whether more text follows that object.
std::optional<bool> leading_object(std::string_view text, std::size_t capacity) {
  if (capacity < text.size() + simdjson::SIMDJSON_PADDING) return std::nullopt;
  od::parser parser;
  od::document_stream stream;
  const std::size_t batch = std::max<std::size_t>(text.size(), 1024);
  if (parser.iterate_many(text.data(), text.size(), batch).get(stream)) return std::nullopt;
  auto it = stream.begin();
  if (!(it != stream.end())) return std::nullopt;
  od::document_reference doc;
  od::object obj;
  if ((*it).get(doc) || doc.get_object().get(obj)) return std::nullopt;
  for (auto f : obj) {
    od::field field;
    if (std::move(f).get(field)) return std::nullopt;
  }
  const char* rest = nullptr;
  return !doc.current_location().get(rest);
}

// Whether `line` starts with one whole JSON object that something follows. simdjson takes a
// line's root object to end at its last token, so `{…}0` or `{…},` fail as an object that "ended
// early"; read as a stream of documents instead, the first one ends at its own brace. A stray
// bracket after the object (`{…}]`, `{…}0]`) fails the whole stream: then the line is read up
// to its last brace, which is the object's own when what follows holds none. Asked on that
// failure only.
bool object_then_more(std::string_view line, std::size_t capacity) {
  if (leading_object(line, capacity).value_or(false)) return true;
  const std::size_t brace = line.rfind('}');
  if (brace == std::string_view::npos || brace + 1 == line.size()) return false;
  return leading_object(line.substr(0, brace + 1), capacity).has_value();
}

const TraceEvent& Backend::parse(std::string_view line, std::size_t capacity,
                                 std::string_view source, std::uint64_t line_number) {
  Impl& p = impl_;
  p.source = source;
  p.line_number = line_number;
  p.kind_name = "trace";
  const auto fail_json = [&](simdjson::error_code err) {
    if (err == simdjson::INCOMPLETE_ARRAY_OR_OBJECT && object_then_more(line, capacity))
      p.fail(std::string(kTrailing));
    p.fail(describe_error(err));
  };
  od::document doc;
  if (auto err = p.parser.iterate(line.data(), line.size(), capacity).get(doc)) fail_json(err);
  od::object obj;
  if (auto err = doc.get_object().get(obj)) {
    if (err != simdjson::INCORRECT_TYPE) fail_json(err);
    p.fail("expected a JSON object per line");
  }
  parse_object(obj);
  // Every field has been visited; anything still in bounds is a second value on the line.
  const char* rest = nullptr;
  if (!doc.current_location().get(rest)) p.fail(std::string(kTrailing));
  return p.event;
}

bool is_json_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// Counts the '\n' in [from, to) and remembers where the line after the last one starts.
void count_lines(const char* data, std::size_t from, std::size_t to, std::uint64_t& lines,
                 std::size_t& line_start) noexcept {
  const char* q = data + from;
  const char* const end = data + to;
  while (q < end) {
    q = static_cast<const char*>(std::memchr(q, '\n', static_cast<std::size_t>(end - q)));
    if (q == nullptr) break;
    ++lines;
    line_start = static_cast<std::size_t>(++q - data);
  }
}

// Never below what the parser already holds: iterate_many re-allocates whenever the batch size
// differs from the parser's capacity, and a long line may have grown it.
std::size_t Backend::batch_bytes() const noexcept {
  return std::max(LineParser::kBatchBytes, impl_.parser.capacity());
}

// One stage 1 over many lines (iterate_many) instead of one per line. A document is only handed
// to the assembler once its line is known to hold exactly that document (trace6.md §5.1: one event
// per line); at the first thing that is not a clean line with a valid event (a JSON or field error,
// a document spanning lines, two on one line, whatever stage 1 rejected) the batch stops at the
// start of that line and the caller re-reads from there with the exact per-line path, which
// produces the error message (or accepts the line, e.g. one with a form feed that it trims).
LineParserBackend::BatchResult Backend::parse_batch(const char* data, std::size_t size,
                                                    std::uint64_t lines_before,
                                                    std::string_view source, EventSink& out) {
  Impl& p = impl_;
  p.source = source;
  BatchResult done{0, 0};  // everything before done.consumed is fully handled
  if (size == 0 || size > batch_bytes()) return done;
  p.parser.threaded = false;  // one batch per call: a stage 1 thread would only add overhead
  od::document_stream stream;
  if (p.parser.iterate_many(data, size, batch_bytes()).get(stream)) return done;
  std::size_t next = 0;  // where the next document must start (after the first one)
  bool first = true;
  for (auto it = stream.begin(); it != stream.end(); ++it) {
    od::document_reference doc;
    if ((*it).get(doc)) return done;
    const std::size_t start = it.current_index();
    if (first) {
      if (start >= size) return done;
      // Only blank lines precede the first document (stage 1 makes a token of anything else).
      count_lines(data, 0, start, done.lines, done.consumed);
      first = false;
    } else if (start != next) {
      return done;
    }
    p.line_number = lines_before + done.lines + 1;
    p.kind_name = "trace";
    od::object obj;
    if (doc.get_object().get(obj)) return done;
    try {
      parse_object(obj);
    } catch (const Error&) {
      return done;  // the per-line path reports it, byte for byte
    }
    // The next token (the start of the next document) bounds this one. The batch's last
    // document has none, and where its object closed is then unknown: stage 1 cuts documents by
    // depth, so `{…}0}` at the end of a batch is one document, which would pass every check
    // below as if its object ended at the last brace. The per-line path takes that line alone.
    const char* loc = nullptr;
    if (doc.current_location().get(loc)) return done;
    const std::size_t bound = static_cast<std::size_t>(loc - data);
    if (bound <= start || bound > size) return done;
    std::size_t end = bound;  // one past the closing brace
    while (end > start && is_json_space(data[end - 1])) --end;
    if (end == start || data[end - 1] != '}') return done;
    // The document's line ends after its closing brace and before the next document.
    const void* nl = std::memchr(data + start, '\n', bound - start);
    if (nl == nullptr) return done;  // the next document shares the line
    const std::size_t line_end = static_cast<std::size_t>(static_cast<const char*>(nl) - data);
    if (line_end < end) return done;  // the document spans lines
    out.add(p.event, p.line_number);
    ++done.lines;
    done.consumed = line_end + 1;
    count_lines(data, line_end + 1, bound, done.lines, done.consumed);  // blank lines
    next = bound;
  }
  return done;  // short of `size` when stage 1 left a tail unread (an unterminated document)
}

}  // namespace

std::unique_ptr<LineParserBackend> CG_CAT(make_line_parser_, CG_PARSER_VARIANT)() {
  return std::make_unique<Backend>();
}

}  // namespace candle_graph

#if defined(CG_PARSER_HASWELL)
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif
