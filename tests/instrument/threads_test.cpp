// Records and spans from many threads: every line is whole and valid, counts are exact, and each
// thread's spans nest on its own stack (attaching to the measured region when it has none).
#include <gtest/gtest.h>

#include <array>
#include <barrier>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "candle_graph/instrument.hpp"
#include "candle_graph/trace.hpp"
#include "instrument/session_test_support.hpp"

namespace candle_graph {
namespace {

using testing_support::ScratchDir;

constexpr int kThreads = 8;
constexpr int kSpansPerThread = 100;
constexpr int kOpsPerSpan = 1000;  // 100 000 op events per thread

TEST(InstrumentThreads, EightThreadsTimesOneHundredThousandEvents) {
  ScratchDir dir;
  TraceSession session(dir / "t.jsonl", ProfileRun::training("stress", 1, "cpu"));
  {
    SpanGuard measured = session.begin_measurement("stress/update-000000000001");
    std::barrier start(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        const std::string worker = "worker-" + std::to_string(t);
        const std::array<std::uint64_t, 2> shape{32, 32};
        const std::array<std::string_view, 1> inputs{worker};
        start.arrive_and_wait();  // maximise contention
        SpanGuard top = session.begin_span(worker);
        for (int s = 0; s < kSpansPerThread; ++s) {
          SpanGuard inner = session.begin_span(worker + "/inner");
          for (int i = 0; i < kOpsPerSpan; ++i)
            session.record_op(inner.id(), {.op_name = worker,
                                           .inputs = inputs,
                                           .shape = shape,
                                           .dtype = "f32",
                                           .device = "cpu",
                                           .duration_ns = static_cast<std::uint64_t>(i)});
        }
      });
    }
    for (std::thread& th : threads) th.join();
  }
  const auto path = session.finish();

  // parse_trace checks every line (a torn or interleaved line would fail here).
  const TraceDocument doc = parse_trace(path);
  const std::uint64_t spans = 2 + kThreads * (1 + kSpansPerThread);
  const std::uint64_t ops = std::uint64_t{kThreads} * kSpansPerThread * kOpsPerSpan;
  EXPECT_EQ(doc.event_count(), 1 + 2 * spans + ops);
  ASSERT_EQ(doc.spans().size(), spans);
  ASSERT_EQ(doc.ops().size(), ops);
  std::size_t non_blank = 0;
  for (const std::string& line : testing_support::read_lines(path))
    non_blank += line.find_first_not_of(' ') != std::string::npos ? 1 : 0;
  EXPECT_EQ(non_blank, doc.event_count());

  // Nesting: worker spans hang off the measured region s2; inner spans off their own worker.
  std::map<std::string_view, const SpanRecord*> by_id;
  for (const SpanRecord& s : doc.spans()) {
    EXPECT_TRUE(s.closed) << s.id;
    by_id[s.id] = &s;
  }
  EXPECT_EQ(by_id.size(), spans);  // ids unique
  std::map<std::string, int> inner_per_worker;
  for (const SpanRecord& s : doc.spans()) {
    const std::string name(s.name);
    if (name.starts_with("worker-") && !name.ends_with("/inner")) {
      EXPECT_EQ(s.parent_id, "s2") << name;
    } else if (name.ends_with("/inner")) {
      const SpanRecord& parent = *by_id.at(*s.parent_id);
      EXPECT_EQ(std::string(parent.name) + "/inner", name);
      ++inner_per_worker[std::string(parent.name)];
    }
  }
  ASSERT_EQ(inner_per_worker.size(), std::size_t{kThreads});
  for (const auto& [w, n] : inner_per_worker) EXPECT_EQ(n, kSpansPerThread) << w;

  // Every op sits in an inner span of the thread that recorded it, 1000 per inner span.
  std::map<std::string_view, int> ops_per_span;
  for (const OpEvent& op : doc.ops()) {
    const SpanRecord& span = *by_id.at(op.span_id);
    ASSERT_EQ(span.name, std::string(op.op_name) + "/inner");
    ++ops_per_span[op.span_id];
  }
  EXPECT_EQ(ops_per_span.size(), std::size_t{kThreads * kSpansPerThread});
  for (const auto& [id, n] : ops_per_span) EXPECT_EQ(n, kOpsPerSpan) << id;
}

// Writer threads of this process (line_sink.cpp names them), read from /proc/self/task.
std::size_t writer_threads() {
  std::size_t n = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    if (std::getline(comm, name) && name == "cg-trace-write") ++n;
  }
  return n;
}

// A joined thread can stay listed for a moment after join() returns (the kernel clears its tid
// before it leaves the thread group): poll instead of reading once.
std::size_t writer_threads_settled(std::size_t expected) {
  std::size_t n = writer_threads();
  for (int i = 0; i < 200 && n != expected; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    n = writer_threads();
  }
  return n;
}

// A trace smaller than the 256 KiB write-out threshold (one captured update) is written by the
// recording thread at flush and finish: no writer thread is started for it (line_sink.cpp), so
// opening a session does no thread creation right before the code it traces. A larger one
// starts the writer at its first write-out.
TEST(InstrumentThreads, WriterThreadStartsOnlyAtTheFirstWriteOut) {
  ScratchDir dir;
  ASSERT_EQ(writer_threads_settled(0), 0u);  // earlier tests' writers have gone
  TraceSession session(dir / "t.jsonl", ProfileRun::training("lazy", 1, "cpu"));
  SpanGuard measured = session.begin_measurement("lazy/update-000000000001");
  const std::array<std::uint64_t, 1> shape{4};
  const OpRecord op{.op_name = "add", .output = "y", .shape = shape, .dtype = "f32"};
  for (int i = 0; i < 100; ++i) session.record_op(measured.id(), op);  // ~20 KiB
  EXPECT_EQ(writer_threads(), 0u);
  for (int i = 0; i < 5000; ++i) session.record_op(measured.id(), op);  // past 256 KiB
  EXPECT_EQ(writer_threads(), 1u);
  measured.end();
  const TraceDocument doc = parse_trace(session.finish());
  EXPECT_EQ(doc.ops().size(), 5100u);
  EXPECT_EQ(writer_threads_settled(0), 0u);
}

TEST(InstrumentThreads, ThreadWithoutOpenSpanAttachesToMeasuredRegionOrEnvelope) {
  ScratchDir dir;
  TraceSession session(dir / "t.jsonl", ProfileRun::training("e", 1, "cpu"));
  auto on_other_thread = [&](std::string_view name) {
    std::thread([&] { SpanGuard g = session.begin_span(name); }).join();
  };
  on_other_thread("before");  // no measured region yet → envelope
  {
    SpanGuard main_outer = session.begin_span("main-outer");
    SpanGuard measured = session.begin_measurement("m");  // s4, nested in main-outer
    SpanGuard main_inner = session.begin_span("main-inner");
    on_other_thread("during");  // its thread has no span → measured region, not main-inner
  }
  on_other_thread("after");  // measured region closed → envelope
  const TraceDocument doc = parse_trace(session.finish());
  std::map<std::string_view, std::string_view> parent;
  for (const SpanRecord& s : doc.spans())
    if (s.parent_id) parent[s.name] = *s.parent_id;
  EXPECT_EQ(parent["before"], "s1");
  EXPECT_EQ(parent["main-outer"], "s1");
  EXPECT_EQ(parent["m"], "s3");
  EXPECT_EQ(parent["main-inner"], "s4");
  EXPECT_EQ(parent["during"], "s4");
  EXPECT_EQ(parent["after"], "s1");
}

TEST(InstrumentThreads, GuardMovedToAnotherThreadEndsThere) {
  ScratchDir dir;
  TraceSession session(dir / "t.jsonl", ProfileRun::training("e", 1, "cpu"));
  SpanGuard guard = session.begin_span("handed-over");
  std::thread([g = std::move(guard)]() mutable { g.end(); }).join();
  SpanGuard next = session.begin_span("next");  // the main thread's stack is empty again
  next.end();
  const TraceDocument doc = parse_trace(session.finish());
  ASSERT_EQ(doc.spans().size(), 3u);
  EXPECT_TRUE(doc.spans()[1].closed);
  EXPECT_EQ(doc.spans()[2].parent_id, "s1");
}

TEST(InstrumentThreads, GradientNumbersAreUniqueAcrossThreads) {
  ScratchDir dir;
  TraceSession session(dir / "t.jsonl", ProfileRun::training("e", 1, "cpu"));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) session.record_gradient("vb", "w", GradientState::present);
    });
  for (std::thread& th : threads) th.join();
  const TraceDocument doc = parse_trace(session.finish());
  std::set<std::string_view> ids;
  for (const GradientEvent& g : doc.gradients()) ids.insert(g.event_id);
  EXPECT_EQ(ids.size(), 4000u);
  EXPECT_TRUE(ids.contains("gradient-1"));
  EXPECT_TRUE(ids.contains("gradient-4000"));
}

}  // namespace
}  // namespace candle_graph
