// CaptureSelector semantics, and the "no heap allocation" promises: nothing on an unselected
// invocation, nothing per event on the record/span hot path once buffers have warmed up.
// Allocations are counted by replacing the global operator new for this test binary.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <new>

#include "candle_graph/instrument.hpp"
#include "candle_graph/trace.hpp"
#include "instrument/session_test_support.hpp"

namespace {
thread_local std::uint64_t tl_allocations = 0;  // this thread's operator new calls
}  // namespace

void* operator new(std::size_t n) {
  ++tl_allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  return ::operator new(n);
}
// The nothrow forms too: otherwise they come from the sanitizer/runtime allocator and are then
// released through the free()-based deletes below (ASan: alloc-dealloc-mismatch).
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return ::operator new(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return ::operator new(n, std::nothrow);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}

namespace candle_graph {
namespace {

using testing_support::ScratchDir;

std::vector<std::uint64_t> selected_steps(CaptureSelector s, std::uint64_t steps) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t i = 0; i < steps; ++i)
    if (s.tick()) out.push_back(s.step());
  return out;
}

TEST(CaptureSelector, AtStepSelectsExactlyThatStep) {
  EXPECT_EQ(selected_steps(CaptureSelector::at_step(3), 1000), (std::vector<std::uint64_t>{3}));
  EXPECT_EQ(selected_steps(CaptureSelector::at_step(1), 10), (std::vector<std::uint64_t>{1}));
  EXPECT_TRUE(selected_steps(CaptureSelector::at_step(0), 1000).empty());
  EXPECT_TRUE(selected_steps(CaptureSelector::never(), 1000).empty());
}

TEST(CaptureSelector, EveryNthSelectsMultiplesOrAnOffsetSeries) {
  EXPECT_EQ(selected_steps(CaptureSelector::every(100), 350),
            (std::vector<std::uint64_t>{100, 200, 300}));
  EXPECT_EQ(selected_steps(CaptureSelector::every(4, 2), 15),
            (std::vector<std::uint64_t>{2, 6, 10, 14}));
  EXPECT_EQ(selected_steps(CaptureSelector::every(1), 3), (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ(selected_steps(CaptureSelector::every(0, 5), 20), (std::vector<std::uint64_t>{5}));
  EXPECT_TRUE(selected_steps(CaptureSelector::every(0), 20).empty());
}

TEST(CaptureSelector, StatelessSelectsAgreesWithTick) {
  for (CaptureSelector s :
       {CaptureSelector::at_step(7), CaptureSelector::every(3), CaptureSelector::every(5, 2),
        CaptureSelector::every(0, 4), CaptureSelector::never()}) {
    CaptureSelector ticking = s;
    for (std::uint64_t step = 1; step <= 200; ++step)
      ASSERT_EQ(ticking.tick(), s.selects(step)) << "step " << step;
  }
  static_assert(CaptureSelector::at_step(2).selects(2));  // usable at compile time
}

TEST(InstrumentAllocation, UnselectedInvocationsAllocateNothing) {
  CaptureSelector selector = CaptureSelector::every(1000);
  const std::uint64_t before = tl_allocations;
  int captured = 0;
  for (int i = 0; i < 999; ++i) captured += selector.tick() ? 1 : 0;
  EXPECT_EQ(captured, 0);
  EXPECT_EQ(tl_allocations, before);
}

TEST(InstrumentAllocation, RecordsAndSpansAllocateNothingPerEventAfterWarmUp) {
  ScratchDir dir;
  TraceSession session(dir / "t.jsonl", ProfileRun::training("e", 1, "cpu"));
  SpanGuard measured = session.begin_measurement("m");
  const std::array<std::uint64_t, 2> shape{32, 32};
  const std::array<std::string_view, 2> inputs{"a", "b"};
  const OpRecord op{.op_name = "matmul",
                    .inputs = inputs,
                    .output = "c",
                    .shape = shape,
                    .dtype = "f32",
                    .device = "cpu",
                    .duration_ns = 10};
  const MemoryRecord mem{.tensor_id = "c",
                         .device = "cpu",
                         .bytes = 4096,
                         .dtype = "f32",
                         .op_name = "matmul",
                         .shape = shape};
  auto one_round = [&] {
    SpanGuard span = session.begin_step_span("forward", ExecutionStep::forward);
    session.record_op(span.id(), op);
    session.record_tensor(span.id(),
                          {.tensor_id = "c", .shape = shape, .dtype = "f32", .device = "cpu"});
    session.record_memory_alloc(span.id(), mem);
    session.record_memory_free(span.id(), mem);
    session.record_device_memory("cpu", 1, 2);
    session.record_gradient("vb", "w", GradientState::present, 1.5);
    session.record_edge(measured.id(), span.id(), 3);
  };
  // Warm-up: the per-thread buffer and span stack reach their working size, and the first
  // write-out (past 256 KiB, ~1.2 KiB per round) starts the writer thread, once per session.
  for (int i = 0; i < 400; ++i) one_round();
  session.flush();  // waits for the writer thread: the file size below is then exact
  ASSERT_GT(std::filesystem::file_size(dir / "t.jsonl"), 256u * 1024);
  const std::uint64_t before = tl_allocations;
  // Enough rounds to cross the 256 KiB write-out threshold several times.
  for (int i = 0; i < 5000; ++i) one_round();
  EXPECT_EQ(tl_allocations, before);
  measured.end();
  const TraceDocument doc = parse_trace(session.finish());
  EXPECT_EQ(doc.ops().size(), 5400u);
}

}  // namespace
}  // namespace candle_graph
