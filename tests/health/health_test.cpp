// trace6.md §6 health: one test per code (exact message text and severity, typed in from the §6
// table), the coverage counters, the trusted flag, emission order, the trace6.md §14 checklist, and
// big inputs that would overflow the stack of a recursive implementation.
#include "candle_graph/health.hpp"
#include "trace/document_editor.hpp"

#include <cstring>

#include "health/health_json.hpp"
#include "support/trace_lines.hpp"

namespace {

using namespace cgtest;
using namespace candle_graph;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

TraceHealth health_of(const std::string& text) {
  return analyze_health(parse_trace_text(text, "h"));
}

std::vector<std::string> codes(const TraceHealth& h) {
  std::vector<std::string> out;
  for (const auto& i : h.issues) out.emplace_back(i.code);
  return out;
}

std::vector<HealthIssue> issues_with(const TraceHealth& h, std::string_view code) {
  std::vector<HealthIssue> out;
  for (const auto& i : h.issues)
    if (i.code == code) out.push_back(i);
  return out;
}

// The trace6.md §4.11 example minus the lines whose 1-based numbers are given, plus extra lines at
// the end.
std::string example_with(std::initializer_list<int> drop, std::initializer_list<std::string> add) {
  const auto lines = lines_of(read_file(fixture("spec_example.jsonl")));
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (std::find(drop.begin(), drop.end(), static_cast<int>(i + 1)) == drop.end())
      out += lines[i] + "\n";
  for (const auto& l : add) out += l + "\n";
  return out;
}

std::vector<std::string> error_codes(const TraceHealth& h) {
  std::vector<std::string> out;
  for (const auto& i : h.issues)
    if (i.severity == HealthSeverity::error) out.emplace_back(i.code);
  return out;
}

// The issues with `code` have exactly these messages and this severity, and nothing else is
// wrong: no other error at all, and for a warning no other issue at all.
void expect_only(const TraceHealth& h, std::string_view code, HealthSeverity severity,
                 const std::vector<std::string>& messages) {
  std::vector<std::string> got;
  for (const auto& i : issues_with(h, code)) {
    got.push_back(i.message);
    EXPECT_EQ(i.severity, severity) << i.message;
  }
  EXPECT_EQ(got, messages);
  for (const auto& i : h.issues) {
    if (i.code == code) continue;
    EXPECT_NE(i.severity, HealthSeverity::error) << "unexpected " << i.code << ": " << i.message;
    if (severity == HealthSeverity::warning) ADD_FAILURE() << "unexpected " << i.code;
  }
  EXPECT_EQ(h.trusted, severity == HealthSeverity::warning);
}

TEST(Health, SpecExampleIsTrustedWithFullCoverage) {  // trace6.md §9.6
  const TraceHealth h = health_of(example_with({}, {}));
  EXPECT_TRUE(h.trusted);
  EXPECT_TRUE(h.issues.empty());
  EvidenceCoverage c;
  c.spans = 5;
  c.closed_spans = 5;
  c.root_spans = 1;
  c.measured_spans = 1;
  c.operations = 2;
  c.tensors = 1;
  c.memory_events = 4;
  c.device_memory_samples = 1;
  c.gradients = 1;
  c.edges = 1;
  c.forward_spans = 1;
  c.backward_spans = 1;
  c.optimizer_spans = 1;
  EXPECT_EQ(h.coverage, c);
  EXPECT_TRUE(h.gaps().empty());
  EXPECT_EQ(h.error_summary(), "");
}

// 1. Only constructible through the library: the parser rejects duplicate span_start ids.
TEST(Health, DuplicateSpanId) {
  TraceDocument doc = parse_trace(fixture("spec_example.jsonl"));
  SpanRecord dup = doc.spans()[4];  // s5, the optimizer span: 12 ms .. 13 ms inside s2
  DocumentEditor(doc).spans().push_back(dup);
  DocumentEditor(doc).reindex();
  const TraceHealth h = analyze_health(doc);
  ASSERT_FALSE(h.issues.empty());
  EXPECT_EQ(h.issues[0].code, "duplicate_span_id");
  EXPECT_EQ(h.issues[0].severity, HealthSeverity::error);
  EXPECT_EQ(h.issues[0].message, "span IDs must be unique; found 6 records but 5 unique IDs");
  EXPECT_FALSE(h.trusted);
  EXPECT_EQ(h.coverage.spans, 6u);
  EXPECT_EQ(h.coverage.optimizer_spans, 2u);
  // s2's direct children now total 5 + 5 + 1 + 1 = 12 ms ≤ 13 ms: nothing else is wrong.
  EXPECT_THAT(codes(h), ElementsAre("duplicate_span_id"));
}

// Editing without reindex() is caught instead of reading stale links.
TEST(Health, StaleIndexesAreAnErrorNotACrash) {
  TraceDocument doc = parse_trace(fixture("spec_example.jsonl"));
  DocumentEditor(doc).spans().push_back(doc.spans()[0]);
  EXPECT_THROW((void)analyze_health(doc), Error);
}

TEST(Health, RootCountTwoRoots) {  // trace6.md §4.11 negative fixture, §14
  const TraceHealth h = health_of(example_with({}, {span_start("r2", "", 0), span_end("r2", 1)}));
  expect_only(h, "root_count", HealthSeverity::error, {"expected exactly one root span, found 2"});
  EXPECT_EQ(h.coverage.root_spans, 2u);
}

TEST(Health, RootCountZeroRoots) {
  const TraceHealth h =
      health_of(text_of({meta_line("infer"), span_start("a", "a", 0, true), span_end("a", 10)}));
  const auto roots = issues_with(h, "root_count");
  ASSERT_EQ(roots.size(), 1u);
  EXPECT_EQ(roots[0].message, "expected exactly one root span, found 0");
}

TEST(Health, MeasurementCountNone) {
  std::string text = example_with({}, {});
  text.replace(text.find(R"("measured":true)"), 15, R"("measured":false)");
  expect_only(health_of(text), "measurement_count", HealthSeverity::error,
              {"expected exactly one measured region, found 0"});
}

TEST(Health, MeasurementCountTwo) {
  std::string text = example_with({}, {});
  const std::string s3 =
      R"("id":"s3","parent_id":"s2","name":"demo/update-000000000001/forward","start_ns":2000000,"span_kind":"function","measured":false)";
  std::string s3_measured = s3;
  s3_measured.replace(s3_measured.find("false"), 5, "true");
  text.replace(text.find(s3), s3.size(), s3_measured);
  const TraceHealth h = health_of(text);
  expect_only(h, "measurement_count", HealthSeverity::error,
              {"expected exactly one measured region, found 2"});
  EXPECT_EQ(h.coverage.measured_spans, 2u);
}

TEST(Health, OpenSpan) {
  // Drop line 18, the span_end of the leaf optimizer span s5: its interval collapses to
  // 12 ms .. 12 ms, still inside s2.
  const TraceHealth h = health_of(example_with({18}, {}));
  expect_only(h, "open_span", HealthSeverity::error, {"span `s5` was not closed"});
  EXPECT_EQ(h.coverage.closed_spans, 4u);
}

TEST(Health, UnknownParent) {
  const TraceHealth h =
      health_of(example_with({}, {span_start("orphan", "ghost", 1000000), span_end("orphan", 1)}));
  expect_only(h, "unknown_parent", HealthSeverity::error,
              {"span `orphan` refers to missing parent `ghost`"});
  EXPECT_EQ(h.coverage.root_spans, 1u);  // a missing parent still is a parent: not a root
}

TEST(Health, ChildOutsideParentAfterItsEnd) {
  // s2 covers 1 000 000 .. 14 000 000.
  const TraceHealth h =
      health_of(example_with({}, {span_start("late", "s2", 20000000), span_end("late", 1)}));
  expect_only(h, "child_outside_parent", HealthSeverity::error,
              {"span `late` interval 20000000..20000001 is outside parent `s2` interval "
               "1000000..14000000"});
}

TEST(Health, ChildOutsideParentBeforeItsStart) {
  const TraceHealth h =
      health_of(example_with({}, {span_start("early", "s2", 999999), span_end("early", 2)}));
  expect_only(h, "child_outside_parent", HealthSeverity::error,
              {"span `early` interval 999999..1000001 is outside parent `s2` interval "
               "1000000..14000000"});
}

// start + duration saturates at u64::MAX instead of wrapping around.
TEST(Health, ChildOutsideParentSaturates) {
  const TraceHealth h = health_of(text_of({
      meta_line("infer"),
      span_start("root", "", 0, true),
      span_start("c", "root", 18446744073709551610ull),
      span_end("c", 100),
      span_end("root", 1000),
  }));
  const auto issues = issues_with(h, "child_outside_parent");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].message,
            "span `c` interval 18446744073709551610..18446744073709551615 is outside parent "
            "`root` interval 0..1000");
}

// An exactly-filling child is inside (the comparisons are strict).
TEST(Health, ChildExactlyFillingItsParentIsFine) {
  const TraceHealth h =
      health_of(text_of({meta_line("infer"), span_start("root", "", 5, true),
                         span_start("c", "root", 5), span_end("c", 10), span_end("root", 10)}));
  EXPECT_TRUE(issues_with(h, "child_outside_parent").empty());
  EXPECT_TRUE(issues_with(h, "children_exceed_parent").empty());
  EXPECT_TRUE(h.trusted);
}

TEST(Health, SpanCycle) {  // trace6.md §14: root plus two spans that are each other's parent
  const TraceHealth h = health_of(text_of({
      meta_line("infer"),
      span_start("root", "", 0, true),
      span_start("a", "b", 10),
      span_start("b", "a", 10),
      span_end("a", 5),
      span_end("b", 5),
      span_end("root", 100),
  }));
  EXPECT_FALSE(h.trusted);
  const auto cyc = issues_with(h, "span_cycle");
  ASSERT_EQ(cyc.size(), 2u);
  EXPECT_EQ(cyc[0].message, "span `a` participates in a parent cycle");
  EXPECT_EQ(cyc[1].message, "span `b` participates in a parent cycle");
  EXPECT_EQ(cyc[0].severity, HealthSeverity::error);
  // a and b contain each other: no interval or sum problem, just the cycle.
  EXPECT_THAT(error_codes(h), ElementsAre("span_cycle", "span_cycle"));
}

// A span hanging below a cycle: walking its parent links revisits an id as well.
TEST(Health, SpanBelowACycleIsReportedToo) {
  const TraceHealth h = health_of(text_of({
      meta_line("infer"),
      span_start("root", "", 0, true),
      span_start("self", "self", 0),
      span_start("below", "self", 0),
      span_end("self", 10),
      span_end("below", 1),
      span_end("root", 100),
  }));
  const auto cyc = issues_with(h, "span_cycle");
  ASSERT_EQ(cyc.size(), 2u);
  EXPECT_EQ(cyc[0].message, "span `self` participates in a parent cycle");
  EXPECT_EQ(cyc[1].message, "span `below` participates in a parent cycle");
}

TEST(Health, ChildrenExceedParent) {  // trace6.md §14: root of 100 ns with two 70 ns children
  const TraceHealth h = health_of(text_of({
      meta_line("infer"),
      span_start("root", "", 0, true),
      span_start("a", "root", 0),
      span_end("a", 70),
      span_start("b", "root", 30),
      span_end("b", 70),
      span_end("root", 100),
  }));
  expect_only(h, "children_exceed_parent", HealthSeverity::error,
              {"children of span `root` total 140 ns, exceeding its 100 ns duration"});
}

// Ops are not counted in the children's sum (trace6.md §6 #8).
TEST(Health, OpsDoNotCountAsChildren) {
  const TraceHealth h = health_of(text_of({
      meta_line("infer"),
      span_start("root", "", 0, true),
      R"({"kind":"op","span_id":"root","op_name":"m","dtype":"f32","device":"cpu","duration_ns":1000})",
      span_end("root", 100),
  }));
  EXPECT_TRUE(issues_with(h, "children_exceed_parent").empty());
}

// The sum of child durations saturates instead of wrapping around to a small number: u64::MAX + 2
// would wrap to 1 and hide the problem.
TEST(Health, ChildrenSumSaturates) {
  const TraceHealth h = health_of(text_of({
      meta_line("infer"),
      span_start("root", "", 0, true),
      span_start("a", "root", 0),
      span_end("a", 18446744073709551615ull),
      span_start("b", "root", 0),
      span_end("b", 2),
      span_end("root", 18446744073709551614ull),
  }));
  const auto ex = issues_with(h, "children_exceed_parent");
  ASSERT_EQ(ex.size(), 1u);
  EXPECT_EQ(ex[0].message,
            "children of span `root` total 18446744073709551615 ns, exceeding its "
            "18446744073709551614 ns duration");
}

TEST(Health, UnknownSpanForOpsTensorsAndMemory) {
  const TraceHealth h = health_of(example_with(
      {},
      {
          R"({"kind":"memory","timestamp_ns":1,"tensor_id":"m","span_id":"ghost3","device":"cpu","bytes":1,"action":"alloc","dtype":"f32"})",
          R"({"kind":"memory","timestamp_ns":2,"tensor_id":"m","span_id":"ghost3","device":"cpu","bytes":1,"action":"free","dtype":"f32"})",
          R"({"kind":"tensor","span_id":"ghost2","tensor_id":"t","dtype":"f32","device":"cpu"})",
          R"({"kind":"op","span_id":"ghost1","op_name":"m","dtype":"f32","device":"cpu","duration_ns":1})",
      }));
  // Checked in the order ops, tensors, memory (trace6.md §6 #9), whatever the line order.
  expect_only(h, "unknown_span", HealthSeverity::error,
              {"operation evidence refers to missing span `ghost1`",
               "tensor evidence refers to missing span `ghost2`",
               "memory evidence refers to missing span `ghost3`",
               "memory evidence refers to missing span `ghost3`"});
}

TEST(Health, UnknownEdgeSpan) {
  const TraceHealth h = health_of(
      example_with({}, {
                           R"({"kind":"edge","from_span":"s1","to_span":"ghost","duration_ns":1})",
                           R"({"kind":"edge","from_span":"ghost","to_span":"s1","duration_ns":1})",
                           R"({"kind":"edge","from_span":"g1","to_span":"g2","duration_ns":1})",
                       }));
  expect_only(h, "unknown_edge_span", HealthSeverity::error,
              {"edge `s1` -> `ghost` refers to a missing span",
               "edge `ghost` -> `s1` refers to a missing span",
               "edge `g1` -> `g2` refers to a missing span"});
}

std::string mem(std::uint64_t ts, std::string_view tensor, std::string_view action,
                std::string_view device = "cpu") {
  return R"({"kind":"memory","timestamp_ns":)" + std::to_string(ts) + R"(,"tensor_id":")" +
         std::string(tensor) + R"(","span_id":"s3","device":")" + std::string(device) +
         R"(","bytes":4,"action":")" + std::string(action) + R"(","dtype":"f32"})";
}

TEST(Health, DuplicateAllocation) {
  const TraceHealth h = health_of(
      example_with({}, {mem(1, "dup", "alloc"), mem(2, "dup", "alloc"), mem(3, "dup", "free")}));
  EXPECT_THAT(codes(h), ElementsAre("duplicate_allocation"));
  EXPECT_EQ(h.issues[0].message, "tensor `dup` was allocated twice without a free");
  EXPECT_EQ(h.issues[0].severity, HealthSeverity::error);
  EXPECT_FALSE(h.trusted);
}

// The pairing key is (device, tensor_id): the same id on two devices is two allocations.
TEST(Health, SameTensorOnTwoDevicesIsNotADuplicate) {
  const TraceHealth h =
      health_of(example_with({}, {mem(1, "t", "alloc", "cpu"), mem(2, "t", "alloc", "cuda:0"),
                                  mem(3, "t", "free", "cpu"), mem(4, "t", "free", "cuda:0")}));
  EXPECT_TRUE(h.issues.empty()) << ::testing::PrintToString(codes(h));
}

// The same out of time order (the pairing sorts the events first), with the second device
// appearing only after the stream has left time order.
TEST(Health, SameTensorOnTwoDevicesOutOfTimeOrderIsNotADuplicate) {
  const TraceHealth h =
      health_of(example_with({}, {mem(3, "t", "free", "cpu"), mem(1, "t", "alloc", "cpu"),
                                  mem(2, "t", "alloc", "cuda:0"), mem(4, "t", "free", "cuda:0")}));
  EXPECT_TRUE(h.issues.empty()) << ::testing::PrintToString(codes(h));
}

TEST(Health, UnpairedFree) {
  const TraceHealth h = health_of(example_with({}, {mem(1, "never", "free")}));
  expect_only(h, "unpaired_free", HealthSeverity::error,
              {"tensor `never` was freed without a live allocation"});
}

// Events are paired in timestamp order, not file order (stable for equal timestamps).
TEST(Health, PairingFollowsTimestampsStably) {
  // File order free-then-alloc but timestamps alloc(5) < free(6): fine.
  EXPECT_TRUE(
      health_of(example_with({}, {mem(6, "t", "free"), mem(5, "t", "alloc")})).issues.empty());
  // Equal timestamps keep file order: the free comes first and is unpaired; the alloc stays.
  const TraceHealth h = health_of(example_with({}, {mem(5, "t", "free"), mem(5, "t", "alloc")}));
  EXPECT_THAT(codes(h), ElementsAre("unpaired_free", "retained_allocations"));
}

TEST(Health, RetainedAllocations) {
  const TraceHealth h =
      health_of(example_with({}, {mem(1, "kept1", "alloc"), mem(2, "kept2", "alloc")}));
  expect_only(h, "retained_allocations", HealthSeverity::warning,
              {"2 explicit allocations remained live at measurement end"});
}

// An inference trace with nothing but spans: the four evidence warnings, no training ones.
TEST(Health, EvidenceAbsentWarningsForInference) {
  const TraceHealth h = health_of(
      text_of({meta_line("infer"), span_start("root", "", 0, true), span_end("root", 10)}));
  EXPECT_TRUE(h.trusted);  // warnings only
  EXPECT_THAT(codes(h), ElementsAre("operations_absent", "tensors_absent", "memory_absent",
                                    "device_memory_absent"));
  EXPECT_THAT(h.gaps(), ElementsAre("no timed operation evidence was captured",
                                    "no tensor checkpoints were captured",
                                    "no tensor memory events were captured",
                                    "no device-memory checkpoints were captured"));
  for (const auto& i : h.issues) EXPECT_EQ(i.severity, HealthSeverity::warning);
}

TEST(Health, OperationsAbsent) {
  expect_only(health_of(example_with({6, 15}, {})), "operations_absent", HealthSeverity::warning,
              {"no timed operation evidence was captured"});
}

TEST(Health, TensorsAbsent) {
  expect_only(health_of(example_with({5}, {})), "tensors_absent", HealthSeverity::warning,
              {"no tensor checkpoints were captured"});
}

TEST(Health, MemoryAbsent) {
  expect_only(health_of(example_with({7, 10, 11, 16}, {})), "memory_absent",
              HealthSeverity::warning, {"no tensor memory events were captured"});
}

TEST(Health, DeviceMemoryAbsent) {
  expect_only(health_of(example_with({20}, {})), "device_memory_absent", HealthSeverity::warning,
              {"no device-memory checkpoints were captured"});
}

TEST(Health, GradientsAbsent) {
  expect_only(health_of(example_with({17}, {})), "gradients_absent", HealthSeverity::warning,
              {"no gradient facts were captured for this training run"});
}

std::string example_without_step(std::string_view step) {
  std::string text = example_with({}, {});
  const std::string tag = R"(,"step":")" + std::string(step) + "\"";
  text.erase(text.find(tag), tag.size());
  return text;
}

TEST(Health, ForwardAbsent) {
  expect_only(health_of(example_without_step("forward")), "forward_absent", HealthSeverity::warning,
              {"no forward span was tagged"});
}

TEST(Health, BackwardAbsent) {
  expect_only(health_of(example_without_step("backward")), "backward_absent",
              HealthSeverity::warning, {"no backward span was tagged"});
}

TEST(Health, OptimizerAbsent) {
  expect_only(health_of(example_without_step("optimizer")), "optimizer_absent",
              HealthSeverity::warning, {"no optimizer span was tagged"});
}

// The training-only warnings (18–21) are not raised for inference.
TEST(Health, TrainingWarningsOnlyForTraining) {
  std::string text = example_with({17}, {});
  text.replace(text.find(R"("phase":"train")"), 15, R"("phase":"infer")");
  for (const char* step :
       {",\"step\":\"forward\"", ",\"step\":\"backward\"", ",\"step\":\"optimizer\""})
    text.erase(text.find(step), std::strlen(step));
  const TraceHealth h = health_of(text);
  EXPECT_TRUE(h.issues.empty()) << ::testing::PrintToString(codes(h));
}

// Step counts use each span's own step, not an inherited one.
TEST(Health, StepCoverageCountsOwnStepOnly) {
  const TraceHealth h = health_of(example_with(
      {}, {span_start("f2", "s3", 2000000, false, "forward"), span_end("f2", 1),
           span_start("child_of_forward", "s3", 2000000), span_end("child_of_forward", 1)}));
  EXPECT_EQ(h.coverage.forward_spans, 2u);
  EXPECT_EQ(h.coverage.backward_spans, 1u);
  EXPECT_EQ(h.coverage.spans, 7u);
}

// trace6.md §6 emission order: 1, 2, 3, then 4–7 per span in document order, 8, 9, 10, 11–13,
// 14–21.
TEST(Health, EmissionOrderAcrossCodes) {
  TraceDocument doc = parse_trace_text(
      text_of({
          meta_line(),
          span_start("r1", "", 0),      // root, never closed
          span_start("r2", "", 0),      // second root
          span_start("c", "r2", 50),    // outside r2 (duration 10)
          span_start("x", "ghost", 0),  // unknown parent, open
          span_start("p", "q", 0),      // cycle p <-> q
          span_start("q", "p", 0),
          span_end("r2", 10),
          span_end("c", 100),  // also makes r2's children exceed it
          span_end("p", 1),
          span_end("q", 1),
          R"({"kind":"op","span_id":"nope","op_name":"m","dtype":"f32","device":"cpu","duration_ns":1})",
          R"({"kind":"edge","from_span":"r1","to_span":"nope","duration_ns":1})",
          R"({"kind":"memory","timestamp_ns":1,"tensor_id":"t","span_id":"r1","device":"cpu","bytes":1,"action":"free","dtype":"f32"})",
          R"({"kind":"memory","timestamp_ns":2,"tensor_id":"u","span_id":"r1","device":"cpu","bytes":1,"action":"alloc","dtype":"f32"})",
          R"({"kind":"memory","timestamp_ns":3,"tensor_id":"u","span_id":"r1","device":"cpu","bytes":1,"action":"alloc","dtype":"f32"})",
      }),
      "order");
  DocumentEditor(doc).spans().push_back(doc.spans()[0]);  // duplicate r1
  DocumentEditor(doc).reindex();
  const TraceHealth h = analyze_health(doc);
  EXPECT_THAT(codes(h), ElementsAre("duplicate_span_id", "root_count", "measurement_count",
                                    "open_span",                              // r1
                                    "child_outside_parent",                   // c
                                    "open_span", "unknown_parent",            // x
                                    "span_cycle", "span_cycle",               // p, q
                                    "open_span",                              // r1 (the duplicate)
                                    "children_exceed_parent",                 // r2
                                    "unknown_span", "unknown_edge_span",      //
                                    "unpaired_free", "duplicate_allocation",  // by timestamp
                                    "retained_allocations", "tensors_absent",
                                    "device_memory_absent", "gradients_absent", "forward_absent",
                                    "backward_absent", "optimizer_absent"));
  EXPECT_EQ(issues_with(h, "root_count")[0].message, "expected exactly one root span, found 3");
  EXPECT_EQ(issues_with(h, "measurement_count")[0].message,
            "expected exactly one measured region, found 0");
  EXPECT_EQ(issues_with(h, "retained_allocations")[0].message,
            "1 explicit allocations remained live at measurement end");
  EXPECT_FALSE(h.trusted);
  EXPECT_EQ(h.error_summary().find("span IDs must be unique; found 7 records but 6 unique IDs; "
                                   "expected exactly one root span, found 3; "),
            0u);
  // With threads for the allocation pairing and the last checks: the same issues, in the same
  // places, and the same verdict (compared with the one-thread result above).
  const TraceHealth threaded = analyze_health(doc, 3);
  EXPECT_EQ(codes(threaded), codes(h));
  EXPECT_EQ(threaded.error_summary(), h.error_summary());
  EXPECT_EQ(threaded.gaps(), h.gaps());
  EXPECT_EQ(threaded.trusted, h.trusted);
  EXPECT_EQ(h.gaps().size(), 7u);
}

// The JSON form used by `validate` and the evidence packet: declaration order, wire strings.
TEST(Health, JsonShape) {
  const TraceHealth h = health_of(example_with({18}, {}));
  output::JsonStream w({}, output::JsonStyle::compact);
  write_health_json(w, h, output::KeyOrder::declaration);
  EXPECT_EQ(
      w.take(),
      R"({"trusted":false,"issues":[{"severity":"error","code":"open_span","message":"span `s5` was not closed"}],)"
      R"("coverage":{"spans":5,"closed_spans":4,"root_spans":1,"measured_spans":1,"operations":2,"tensors":1,)"
      R"("memory_events":4,"device_memory_samples":1,"gradients":1,"edges":1,"forward_spans":1,)"
      R"("backward_spans":1,"optimizer_spans":1}})");
}

// Stack safety: health must not recurse over the span tree. 200 000 nested spans…
TEST(Health, DeepChainDoesNotOverflowTheStack) {
  constexpr std::uint64_t n = 200000;
  std::string text = meta_line("infer") + "\n";
  text.reserve(n * 200);
  for (std::uint64_t i = 0; i < n; ++i)
    text +=
        span_start("s" + std::to_string(i), i ? "s" + std::to_string(i - 1) : "", i, i == 0) + "\n";
  for (std::uint64_t i = n; i-- > 0;) text += span_end("s" + std::to_string(i), 2 * (n - i)) + "\n";
  const TraceDocument doc = parse_trace_text(text, "deep");
  const TraceHealth h = analyze_health(doc);
  EXPECT_TRUE(h.trusted) << ::testing::PrintToString(codes(h));
  EXPECT_EQ(h.coverage.spans, n);
  EXPECT_EQ(h.coverage.closed_spans, n);
  EXPECT_TRUE(parse_trace_text(write_jsonl_string(doc), "again") == doc);
}

// …a 200 000-span parent cycle…
TEST(Health, LongCycleDoesNotOverflowTheStack) {
  constexpr std::uint64_t n = 200000;
  TraceDocument doc = parse_trace_text(text_of({meta_line("infer")}), "cycle");
  DocumentEditor edit(doc);
  for (std::uint64_t i = 0; i < n; ++i) {
    SpanRecord s;
    s.id = edit.arena().copy("s" + std::to_string(i));
    s.parent_id = edit.arena().copy("s" + std::to_string((i + 1) % n));
    s.name = s.id;
    s.closed = true;
    s.measured = i == 0;
    edit.spans().push_back(s);
  }
  edit.reindex();
  const TraceHealth h = analyze_health(doc);
  EXPECT_EQ(issues_with(h, "span_cycle").size(), n);
  EXPECT_EQ(issues_with(h, "root_count").size(), 1u);
}

// …and a 200 000-child wide tree.
TEST(Health, WideTree) {
  constexpr std::uint64_t n = 200000;
  std::string text = meta_line("infer") + "\n" + span_start("root", "", 0, true) + "\n";
  for (std::uint64_t i = 0; i < n; ++i)
    text += span_start("c" + std::to_string(i), "root", i) + "\n" +
            span_end("c" + std::to_string(i), 1) + "\n";
  text += span_end("root", n) + "\n";
  const TraceHealth h = health_of(text);
  EXPECT_TRUE(h.trusted);
  EXPECT_EQ(h.coverage.spans, n + 1);
  EXPECT_TRUE(issues_with(h, "children_exceed_parent").empty());  // exactly n ≤ n
}

}  // namespace
