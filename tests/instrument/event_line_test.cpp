// The hot-path formatter (src/instrument/event_line.cpp) must produce exactly the bytes of the
// trace writer's append_event_json for the same event: same field order, omission rules,
// escaping, number forms. Checked over a grid of strings that exercise every escaping branch,
// absent/present optionals, extreme numbers, and lines too long for the fast buffer.
#include <gtest/gtest.h>

#include <array>
#include <limits>
#include <string>
#include <vector>

#include "candle_graph/trace.hpp"
#include "instrument/event_line.hpp"

namespace candle_graph {
namespace {

const std::vector<std::string>& strings() {
  static const std::vector<std::string> pool = {
      "",
      "plain",
      "quote\" backslash\\ slash/",
      std::string("controls \x01\x1f\b\f\n\r\t and \0 nul",
                  sizeof("controls \x01\x1f\b\f\n\r\t and \0 nul") - 1),
      "unicode \xC3\xBC \xE2\x82\xAC \xF0\x9F\x98\x80",  // ü € 😀 stay as UTF-8
      "invalid \xFF utf8 \xC3 \xED\xA0\x80",             // replaced by U+FFFD
      std::string(20000, 'L'),                           // beyond the 16 KiB fast buffer
      std::string(3000, '"'),                            // escaped growth beyond it too
  };
  return pool;
}

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

template <typename Event>
void expect_same_bytes(const Event& e) {
  std::string expected;
  append_event_json(expected, TraceEvent(e));
  expected.push_back('\n');
  const std::string_view got = detail::format_line(e);
  ASSERT_EQ(got, expected);
}

TEST(EventLine, SpansMatchTheTraceWriter) {
  for (const std::string& s : strings())
    for (bool parent : {false, true})
      for (bool measured : {false, true}) {
        SpanStartEvent e{s, std::nullopt, s, kMax, SpanKind::module, measured, std::nullopt};
        if (parent) e.parent_id = s;
        expect_same_bytes(e);
        e.step = ExecutionStep::optimizer;
        e.start_ns = 0;
        expect_same_bytes(e);
        expect_same_bytes(SpanEndEvent{s, measured ? kMax : 0});
      }
}

// Session spans are formatted from span numbers (format_span_start_line / format_span_end_line):
// the same bytes as the trace writer's lines of the equivalent events.
TEST(EventLine, SpanLinesFromNumbersMatchTheTraceWriter) {
  const std::uint64_t numbers[] = {1, 9, 10, 99, 100, 123456, kMax};
  for (const std::string& name : strings())
    for (std::uint64_t number : numbers)
      for (bool measured : {false, true}) {
        const std::uint64_t parent = number == 1 ? 1 : number - 1;
        const std::string id = "s" + std::to_string(number), pid = "s" + std::to_string(parent);
        // Every span kind and step (their quoted words come from a table).
        for (SpanKind kind : {SpanKind::function, SpanKind::op, SpanKind::module})
          for (std::optional<ExecutionStep> step :
               {std::optional<ExecutionStep>{}, std::optional{ExecutionStep::forward},
                std::optional{ExecutionStep::backward}, std::optional{ExecutionStep::optimizer}}) {
            std::string expected;
            append_event_json(
                expected, TraceEvent(SpanStartEvent{id, pid, name, number, kind, measured, step}));
            expected.push_back('\n');
            ASSERT_EQ(
                detail::format_span_start_line(number, parent, name, number, kind, measured, step),
                expected);
          }
        std::string expected;
        append_event_json(expected, TraceEvent(SpanEndEvent{id, measured ? kMax : 0}));
        expected.push_back('\n');
        ASSERT_EQ(detail::format_span_end_line(number, measured ? kMax : 0), expected);
      }
}

// Strings of up to 16 bytes take the formatter's vector path, longer ones (and every string in
// sanitizer builds) output::write_json_string's word loop: every byte value at every position of
// every length up to 24 (one, two and three words, overlapping tails) must come out as the trace
// writer's escaping has it.
TEST(EventLine, EveryByteAtEveryPositionMatchesTheTraceWriter) {
  for (int c = 0; c < 256; ++c)
    for (std::size_t n = 1; n <= 24; ++n)
      for (std::size_t at = 0; at < n; ++at) {
        std::string s(n, 'a');
        s[at] = static_cast<char>(c);
        expect_same_bytes(SpanEndEvent{s, 0});
      }
}

// Records default their strings to std::string_view{}, whose data() is null: the short-string
// fast path must not read through it.
TEST(EventLine, DefaultEmptyViewsAreWrittenAsEmptyStrings) {
  OpEvent e;
  expect_same_bytes(e);
  expect_same_bytes(SpanEndEvent{std::string_view{}, 0});
}

TEST(EventLine, NumbersAroundEveryPowerOfTenMatchTheTraceWriter) {
  std::uint64_t p = 1;
  for (int k = 0; k < 20; ++k, p *= 10)
    for (std::uint64_t v : {p - 1, p, p + 1, p * 2 - 1, p * 9})
      expect_same_bytes(SpanEndEvent{"s1", v});
  expect_same_bytes(SpanEndEvent{"s1", kMax - 1});
}

TEST(EventLine, OpsMatchTheTraceWriter) {
  const std::array<std::uint64_t, 4> shape{32, 0, kMax, 1};
  for (const std::string& s : strings()) {
    const std::array<std::string_view, 3> inputs{s, "w", s};
    for (int variant = 0; variant < 4; ++variant) {
      OpEvent e;
      e.span_id = s;
      e.op_name = s;
      e.dtype = s;
      e.device = s;
      e.duration_ns = kMax;
      e.timestamp_ns = variant;
      if (variant & 1) {
        e.inputs = inputs;
        e.output = s;
        e.shape = shape;
        e.storage_bytes = 4096;
      }
      if (variant & 2) e.input_storage_bytes = variant == 2 ? 0 : kMax;
      expect_same_bytes(e);
      // record_op's path formats straight from the caller's OpRecord (format_op_line), with a
      // session span id of any width and both byte counts always written.
      for (std::uint64_t span : {std::uint64_t{1}, std::uint64_t{42}, kMax}) {
        const std::string id = "s" + std::to_string(span);
        OpEvent written = e;
        written.span_id = id;
        written.storage_bytes = e.storage_bytes.value_or(7);
        written.input_storage_bytes = e.input_storage_bytes.value_or(0);
        const OpRecord r{e.op_name, e.inputs,      e.output, e.shape, e.dtype,
                         e.device,  e.duration_ns, 0,        {},      *written.input_storage_bytes};
        std::string expected;
        append_event_json(expected, TraceEvent(written));
        expected.push_back('\n');
        ASSERT_EQ(detail::format_op_line(span, r, e.timestamp_ns, *written.storage_bytes),
                  expected);
      }
    }
  }
}

TEST(EventLine, TensorsAndMemoryMatchTheTraceWriter) {
  const std::array<std::uint64_t, 2> shape{8, 32};
  for (const std::string& s : strings())
    for (int variant = 0; variant < 2; ++variant) {
      TensorEvent t;
      t.span_id = t.tensor_id = t.dtype = t.device = s;
      t.requires_grad = variant;
      t.category = variant ? MemoryCategory::gradient : MemoryCategory::other;
      if (variant) {
        t.shape = shape;
        t.storage_bytes = 1024;
      }
      expect_same_bytes(t);
      MemoryEvent m;
      m.timestamp_ns = variant ? kMax : 0;
      m.tensor_id = m.span_id = m.device = m.dtype = s;
      m.bytes = 12345;
      m.action = variant ? MemoryAction::free : MemoryAction::alloc;
      m.category = MemoryCategory::optimizer;
      if (variant) {
        m.op_name = s;
        m.shape = shape;
      }
      expect_same_bytes(m);
    }
}

TEST(EventLine, DeviceMemoryGradientsAndEdgesMatchTheTraceWriter) {
  for (const std::string& s : strings()) {
    expect_same_bytes(DeviceMemoryEvent{0, s, kMax, 7, std::nullopt});
    expect_same_bytes(DeviceMemoryEvent{kMax, s, 1, 0, 0});
    expect_same_bytes(EdgeEvent{s, s, kMax});
    for (std::optional<double> norm :
         {std::optional<double>{}, std::optional(0.42), std::optional(13.0), std::optional(1e21),
          std::optional(1.5e-7), std::optional(-0.0), std::optional(0.13333333333333333)})
      expect_same_bytes(GradientEvent{s, s, s, GradientState::non_finite, norm});
  }
}

}  // namespace
}  // namespace candle_graph
