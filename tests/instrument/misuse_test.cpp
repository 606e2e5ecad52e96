// Misuse gets one exception type (InstrumentError) with a message that says what to do, and the
// trace file stays valid: it always parses, and whatever was left unclosed shows as open_span.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>

#include "candle_graph/health.hpp"
#include "candle_graph/instrument.hpp"
#include "candle_graph/trace.hpp"
#include "instrument/session_test_support.hpp"

namespace candle_graph {
namespace {

using ::testing::HasSubstr;
using testing_support::ScratchDir;

ProfileRun run() {
  return ProfileRun::training("e", 1, "cpu");
}

std::vector<std::string_view> issue_codes(const TraceDocument& doc) {
  std::vector<std::string_view> codes;
  for (const HealthIssue& i : analyze_health(doc).issues)
    if (i.severity == HealthSeverity::error) codes.push_back(i.code);
  return codes;
}

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InstrumentError& e) {
    return e.what();
  }
  return "<no InstrumentError>";
}

TEST(InstrumentMisuse, CaptureStepZeroIsRejectedAndNothingIsCreated) {
  ScratchDir dir;
  const std::string message =
      error_of([&] { TraceSession s(dir / "t.jsonl", ProfileRun::training("e", 0, "cpu")); });
  EXPECT_THAT(message, HasSubstr("capture_step must be one-based and greater than zero"));
  EXPECT_FALSE(std::filesystem::exists(dir / "t.jsonl"));
}

TEST(InstrumentMisuse, UnwritablePathNamesThePathAndSaysWhatToDo) {
  ScratchDir dir;
  // A directory below a regular file can never be created, whoever runs the test (even root).
  { std::ofstream(dir / "file") << "x"; }
  const auto bad = dir / "file" / "t.jsonl";
  const std::string message = error_of([&] { TraceSession s(bad, run()); });
  EXPECT_THAT(message, HasSubstr((dir / "file").string()));
  EXPECT_THAT(message, HasSubstr("choose a writable trace path"));
  // The target itself being a directory fails at open().
  const std::string message2 = error_of([&] { TraceSession s(dir.path(), run()); });
  EXPECT_THAT(message2, HasSubstr("cannot create the trace file"));
}

TEST(InstrumentMisuse, ExplicitOutOfOrderEndThrowsAndRetryingInOrderWorks) {
  ScratchDir dir;
  TraceSession session(dir / "t.jsonl", run());
  {
    SpanGuard outer = session.begin_measurement("m");
    SpanGuard inner = session.begin_span("inner");
    const std::string message = error_of([&] { outer.end(); });
    EXPECT_THAT(message, HasSubstr("span `s2` was ended while `s3`"));
    EXPECT_THAT(message, HasSubstr("end SpanGuards in reverse order of creation"));
    EXPECT_TRUE(outer.active());  // still open: the guards end in order at scope exit
  }
  const TraceDocument doc = parse_trace(session.finish());  // no deferred error: finish returns
  EXPECT_TRUE(issue_codes(doc).empty());
}

TEST(InstrumentMisuse, DestructorOutOfOrderLeavesTheSpanOpenAndFinishReportsIt) {
  ScratchDir dir;
  TraceSession session(dir / "t.jsonl", run());
  {
    std::optional<SpanGuard> outer = session.begin_measurement("m");
    SpanGuard inner = session.begin_span("inner");
    outer.reset();  // destroyed before `inner`: cannot throw from a destructor
    SpanGuard later = session.begin_span("later");
    EXPECT_EQ(later.id(), SpanId(4));
  }
  const std::string message = error_of([&] { session.finish(); });
  EXPECT_THAT(message, HasSubstr("not trusted"));
  EXPECT_THAT(message, HasSubstr("span `s2` was ended while `s3`"));
  const TraceDocument doc = parse_trace(dir / "t.jsonl");  // complete and valid nevertheless
  EXPECT_THAT(issue_codes(doc), ::testing::Contains("open_span"));
  // `later` nested under `inner` (the still-open span of this thread), not under the dead `s2`.
  EXPECT_EQ(doc.spans()[3].parent_id, "s3");
  EXPECT_TRUE(session.finished());
}

TEST(InstrumentMisuse, SecondMeasuredRegionIsRejected) {
  ScratchDir dir;
  TraceSession session(dir / "t.jsonl", run());
  { SpanGuard first = session.begin_measurement("m"); }
  const std::string message = error_of([&] { session.begin_measurement("again"); });
  EXPECT_THAT(message, HasSubstr("begin_measurement was already called (measured region `s2`)"));
  EXPECT_THAT(message, HasSubstr("use begin_span"));
  const TraceDocument doc = parse_trace(session.finish());
  EXPECT_EQ(doc.spans().size(), 2u);  // nothing was written for the rejected call
}

TEST(InstrumentMisuse, RecordingAfterFinishIsRejected) {
  ScratchDir dir;
  TraceSession session(dir / "t.jsonl", run());
  session.finish();
  const std::string before = testing_support::read_file(dir / "t.jsonl");
  EXPECT_THAT(error_of([&] { session.record_gradient("vb", "w", GradientState::present); }),
              HasSubstr("the session is finished; record events and begin spans before finish()"));
  EXPECT_THAT(error_of([&] { session.begin_span("late"); }), HasSubstr("the session is finished"));
  EXPECT_THAT(
      error_of([&] { session.record_op(session.envelope(), {.op_name = "x", .dtype = "f32"}); }),
      HasSubstr("the session is finished"));
  EXPECT_EQ(session.finish(), dir / "t.jsonl");  // idempotent
  EXPECT_EQ(testing_support::read_file(dir / "t.jsonl"), before);
}

TEST(InstrumentMisuse, FinishWithOpenGuardsCompletesTheFileAndReportsTheSpans) {
  ScratchDir dir;
  TraceSession session(dir / "t.jsonl", run());
  SpanGuard measured = session.begin_measurement("m");
  EXPECT_THAT(error_of([&] { session.finish(); }), HasSubstr("span(s) `s2` were still open"));
  EXPECT_THAT(error_of([&] { measured.end(); }), HasSubstr("ended after the session finished"));
  EXPECT_FALSE(measured.active());
  const TraceDocument doc = parse_trace(dir / "t.jsonl");
  EXPECT_TRUE(doc.spans()[0].closed);
  EXPECT_FALSE(doc.spans()[1].closed);
  EXPECT_THAT(issue_codes(doc), ::testing::ElementsAre("open_span"));
}

TEST(InstrumentMisuse, UnknownSpanIdsAreRejected) {
  ScratchDir dir;
  TraceSession session(dir / "t.jsonl", run());
  EXPECT_THAT(error_of([&] { session.record_op(SpanId(7), {.op_name = "x", .dtype = "f32"}); }),
              HasSubstr("span `s7` does not exist in this session"));
  EXPECT_THAT(error_of([&] { session.record_edge(SpanId(1), SpanId(), 1); }),
              HasSubstr("span `s0` does not exist"));
  const TraceDocument doc = parse_trace(session.finish());
  EXPECT_TRUE(doc.ops().empty());
  EXPECT_TRUE(doc.edges().empty());
}

TEST(InstrumentMisuse, GuardOutlivingItsSessionIsHarmless) {
  ScratchDir dir;
  std::optional<SpanGuard> survivor;
  {
    TraceSession session(dir / "t.jsonl", run());
    survivor = session.begin_span("kept");
  }  // the session finishes (s2 stays open) and hands its state to the guard
  EXPECT_THAT(error_of([&] { survivor->end(); }), HasSubstr("ended after the session finished"));
  survivor.reset();
  const TraceDocument doc = parse_trace(dir / "t.jsonl");
  EXPECT_TRUE(doc.spans()[0].closed);
  EXPECT_FALSE(doc.spans()[1].closed);
  EXPECT_THAT(issue_codes(doc), ::testing::Contains("open_span"));
}

TEST(InstrumentMisuse, MovedFromSessionSaysWhereTheStateWent) {
  ScratchDir dir;
  TraceSession a(dir / "t.jsonl", run());
  TraceSession b = std::move(a);
  EXPECT_THAT(error_of([&] { a.flush(); }), HasSubstr("moved from"));
  SpanGuard g = b.begin_span("x");
  SpanGuard moved = std::move(g);
  EXPECT_FALSE(g.active());
  EXPECT_TRUE(moved.active());
  moved.end();
  EXPECT_NO_THROW(b.finish());
}

// begin_step_span_at backdates a span (the LibTorch capture's automatic backward span starts at
// the implicit gradient's ones_like). A start in the future is refused and leaves nothing
// behind; a start before the enclosing span's start is written and health reports it.
TEST(InstrumentBackdatedSpan, StartsAtTheGivenTimeInsideItsParent) {
  ScratchDir dir;
  TraceSession session(dir / "t.jsonl", run());
  std::uint64_t start = 0;
  {
    SpanGuard measured = session.begin_measurement("m");
    start = session.elapsed_ns();
    while (session.elapsed_ns() < start + 1'000'000) {
    }  // 1 ms of work "before the phase was recognised"
    SpanGuard backward = session.begin_step_span_at("m/backward", ExecutionStep::backward, start);
    EXPECT_THAT(error_of([&] {
                  (void)session.begin_step_span_at("m/future", ExecutionStep::backward,
                                                   session.elapsed_ns() + 1'000'000'000);
                }),
                HasSubstr("must start in the past"));
  }
  const TraceDocument doc = parse_trace(session.finish());
  EXPECT_TRUE(issue_codes(doc).empty());
  ASSERT_EQ(doc.spans().size(), 3u);  // envelope, measured region, backward: no refused span
  const SpanRecord& backward = doc.spans()[2];
  EXPECT_EQ(backward.name, "m/backward");
  EXPECT_EQ(backward.start_ns, start);
  EXPECT_GE(backward.duration_ns, 1'000'000u);  // the span counts from its backdated start
  EXPECT_EQ(backward.parent_id, std::optional<std::string_view>(doc.spans()[1].id));
}

TEST(InstrumentBackdatedSpan, StartBeforeTheParentIsReportedByHealth) {
  ScratchDir dir;
  TraceSession session(dir / "t.jsonl", run());
  {
    const std::uint64_t before = session.elapsed_ns();
    while (session.elapsed_ns() < before + 100'000) {
    }
    SpanGuard measured = session.begin_measurement("m");
    SpanGuard early = session.begin_step_span_at("m/early", ExecutionStep::backward, before);
  }
  const TraceDocument doc = parse_trace(session.finish());
  EXPECT_THAT(issue_codes(doc), ::testing::Contains("child_outside_parent"));
}

}  // namespace
}  // namespace candle_graph
