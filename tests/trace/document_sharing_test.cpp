// A parsed document keeps one copy of a tensor id or shape that the trace repeats close together
// (`ArenaCopies::recent`, src/trace/arena_copies.*), which is what keeps `export --format chrome`
// of a large trace under the size of its input. These tests check both halves of that: the copies
// are shared, and sharing never hands back another value (every id and shape reads back exactly as
// written, also when thousands of distinct values evict each other from the cache).
#include "support/trace_lines.hpp"

namespace {

using namespace cgtest;
using candle_graph::MemoryEvent;
using candle_graph::parse_trace_text;
using candle_graph::TraceDocument;

// One op per tensor `t<i>` with output t<i>, input t<i-1> and shape `shape_of(i)`, then the
// alloc of t<i> with the same shape: the layout a capture writes.
template <typename ShapeOf>
std::string chain_trace(std::size_t n, ShapeOf shape_of) {
  std::vector<std::string> lines{meta_line(), span_start("root", "", 0, true)};
  for (std::size_t i = 1; i <= n; ++i) {
    const std::string t = "t" + std::to_string(i), prev = "t" + std::to_string(i - 1);
    const std::string shape = shape_of(i);
    lines.push_back(R"({"kind":"op","span_id":"root","op_name":"add","inputs":[")" + prev +
                    R"("],"output":")" + t + R"(","shape":)" + shape +
                    R"(,"dtype":"f32","device":"cpu","duration_ns":1,"timestamp_ns":)" +
                    std::to_string(i) + "}");
    lines.push_back(R"({"kind":"memory","timestamp_ns":)" + std::to_string(i) +
                    R"(,"tensor_id":")" + t +
                    R"(","span_id":"root","device":"cpu","bytes":4,"action":"alloc","shape":)" +
                    shape + R"(,"dtype":"f32","category":"activation"})");
  }
  lines.push_back(span_end("root", n + 10));
  return join_lines(lines);
}

std::string shape_text(std::size_t a, std::size_t b) {
  return "[" + std::to_string(a) + "," + std::to_string(b) + "]";
}

TEST(DocumentSharing, RepeatedShapesAndIdsShareOneCopy) {
  constexpr std::size_t n = 5000;
  TraceDocument doc =
      parse_trace_text(chain_trace(n, [](std::size_t) { return shape_text(8, 128); }));
  ASSERT_EQ(doc.ops().size(), n);
  ASSERT_EQ(doc.memory().size(), n);
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_EQ(doc.ops()[i].shape.data(), doc.ops()[0].shape.data()) << i;
    EXPECT_EQ(doc.memory()[i].shape.data(), doc.ops()[0].shape.data()) << i;
    // The alloc names the op's output; the next op names it as its input.
    EXPECT_EQ(doc.memory()[i].tensor_id.data(), doc.ops()[i].output->data()) << i;
    if (i + 1 < n) {
      EXPECT_EQ(doc.ops()[i + 1].inputs[0].data(), doc.ops()[i].output->data()) << i;
    }
  }
  // Copied per occurrence, the shapes alone took 2 × n × 16 bytes.
  EXPECT_LT(doc.arena_bytes(), 2 * n * 16);
}

TEST(DocumentSharing, DistinctValuesReadBackExactly) {
  // 20,000 distinct shapes and ids: far more than the cache holds, so slots are reused all the
  // time; a shared copy must never stand for a different value.
  constexpr std::size_t n = 20000;
  auto shape_of = [](std::size_t i) { return shape_text(i % 997, i / 7); };
  const TraceDocument doc = parse_both(chain_trace(n, shape_of));
  ASSERT_EQ(doc.ops().size(), n);
  for (std::size_t i = 1; i <= n; ++i) {
    const auto& op = doc.ops()[i - 1];
    const auto& m = doc.memory()[i - 1];
    const std::vector<std::uint64_t> want{i % 997, i / 7};
    EXPECT_EQ(std::vector<std::uint64_t>(op.shape.begin(), op.shape.end()), want) << i;
    EXPECT_EQ(std::vector<std::uint64_t>(m.shape.begin(), m.shape.end()), want) << i;
    EXPECT_EQ(*op.output, "t" + std::to_string(i));
    EXPECT_EQ(m.tensor_id, "t" + std::to_string(i));
    ASSERT_EQ(op.inputs.size(), 1u);
    EXPECT_EQ(op.inputs[0], "t" + std::to_string(i - 1));
  }
}

TEST(DocumentSharing, MemoryEventHasNoPaddingHoles) {
  // A parsed trace holds one MemoryEvent per memory line; the two one-byte fields sit together
  // (8 words of views and numbers, then the two enums: 122 bytes rounded up to 128).
  EXPECT_LE(sizeof(MemoryEvent), 128u);
}

}  // namespace
