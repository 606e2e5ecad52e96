// `candle-graph validate TRACE [-o FILE] [--require-trusted]`, run as a real
// process: exit codes 0/1/2/3, the `error: PATH:LINE: message` format, atomic -o.
#include <gmock/gmock.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <random>

#include "cli_test_support.hpp"

namespace {

using namespace cgcli;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Typed in by hand from the validation/1 key order and trace6.md §9.6 (coverage of the §4.11
// example), in serde_json's 2-space pretty layout with one trailing newline.
constexpr std::string_view kSpecExampleValidation = R"({
  "schema": "candle-graph/validation/1",
  "trace": "spec_example.jsonl",
  "events": 21,
  "health": {
    "trusted": true,
    "issues": [],
    "coverage": {
      "spans": 5,
      "closed_spans": 5,
      "root_spans": 1,
      "measured_spans": 1,
      "operations": 2,
      "tensors": 1,
      "memory_events": 4,
      "device_memory_samples": 1,
      "gradients": 1,
      "edges": 1,
      "forward_spans": 1,
      "backward_spans": 1,
      "optimizer_spans": 1
    }
  }
}
)";

TEST(ValidateCli, TrustedTraceExactOutput) {
  const RunResult r = run_cli({"validate", "spec_example.jsonl"}, CG_FIXTURE_DIR);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, kSpecExampleValidation);
  EXPECT_EQ(r.err, "");
}

TEST(ValidateCli, RequireTrustedOnATrustedTraceExitsZero) {
  const RunResult r =
      run_cli({"validate", fixture("spec_example.jsonl").string(), "--require-trusted"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["trace"], fixture("spec_example.jsonl").string());
  EXPECT_EQ(j["health"]["trusted"], true);
}

// The trace6.md §17.4 example: an unclosed root span. Parses (exit 0) but is untrusted (exit 3 on
// demand).
TEST(ValidateCli, UntrustedTraceExitCodes) {
  const std::string trace = fixture("untrusted_open_root.jsonl").string();
  const RunResult plain = run_cli({"validate", trace});
  EXPECT_EQ(plain.exit_code, 0) << describe(plain);
  const auto j = nlohmann::json::parse(plain.out);
  EXPECT_EQ(j["events"], 20);
  EXPECT_EQ(j["health"]["trusted"], false);
  std::vector<std::string> codes;
  for (const auto& i : j["health"]["issues"]) codes.push_back(i["code"]);
  // s1 is open (duration 0), so s2 lies outside it and its children exceed it.
  EXPECT_THAT(codes, ElementsAre("open_span", "child_outside_parent", "children_exceed_parent"));
  EXPECT_EQ(j["health"]["issues"][0]["message"], "span `s1` was not closed");
  EXPECT_EQ(j["health"]["issues"][0]["severity"], "error");

  const RunResult strict = run_cli({"validate", trace, "--require-trusted"});
  EXPECT_EQ(strict.exit_code, 3) << describe(strict);
  EXPECT_EQ(strict.out, plain.out);  // the report is still printed
}

TEST(ValidateCli, ParseErrorExitsOneWithPathAndLine) {
  TempDir dir;
  const fs::path trace = dir / "trace.jsonl";
  const std::string good = read_file(fixture("spec_example.jsonl"));
  write_file(trace, good.substr(0, good.find('\n') + 1) + "\n{\"kind\":\"telemetry\"}\n");
  const RunResult r = run_cli({"validate", trace.string()});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_EQ(r.err, "error: " + trace.string() + ":3: unknown event kind \"telemetry\"\n");
  EXPECT_EQ(r.out, "");
}

TEST(ValidateCli, ParseErrorWithRelativePath) {
  TempDir dir;
  write_file(dir / "t.jsonl", "{\"kind\":\"span_end\",\"id\":\"s1\"}\n");
  const RunResult r = run_cli({"validate", "t.jsonl"}, dir.path());
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_EQ(r.err, "error: t.jsonl:1: span_end for unknown span `s1` at index 0\n");
}

TEST(ValidateCli, EmptyFileExitsOne) {
  TempDir dir;
  write_file(dir / "empty.jsonl", "");
  const RunResult r = run_cli({"validate", "empty.jsonl"}, dir.path());
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_EQ(r.err, "error: empty.jsonl: trace stream is missing a meta event with run metadata\n");
}

TEST(ValidateCli, BinaryGarbageExitsOne) {
  TempDir dir;
  std::string garbage;
  std::mt19937 rng(1);
  for (int i = 0; i < 4096; ++i) garbage.push_back(static_cast<char>(rng()));
  write_file(dir / "g.jsonl", garbage);
  const RunResult r = run_cli({"validate", "g.jsonl"}, dir.path());
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_THAT(r.err, StartsWith("error: g.jsonl:"));
  EXPECT_EQ(r.err.back(), '\n');
}

TEST(ValidateCli, MissingFileExitsOne) {
  TempDir dir;
  const RunResult r = run_cli({"validate", (dir / "absent.jsonl").string()});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_THAT(r.err, StartsWith("error: " + (dir / "absent.jsonl").string() + ": "));
  EXPECT_THAT(r.err, HasSubstr("cannot open"));
  EXPECT_EQ(r.out, "");
}

TEST(ValidateCli, DirectoryExitsOne) {
  TempDir dir;
  const RunResult r = run_cli({"validate", dir.path().string()});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_THAT(r.err, StartsWith("error: " + dir.path().string() + ": "));
  EXPECT_THAT(r.err, HasSubstr("a directory, not a trace file"));
}

// A named pipe with no writer (opening it would block) and a device are refused before they are
// opened, with the hint a user piping `zcat` needs.
TEST(ValidateCli, APipeOrADeviceIsRefusedWithAHint) {
  TempDir dir;
  const fs::path fifo = dir / "trace.jsonl";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo.string(), std::string("/dev/null")}) {
    const RunResult r = run_cli({"validate", path});
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_THAT(r.err, StartsWith("error: " + path + ": cannot open: not a regular file"));
    EXPECT_THAT(r.err, HasSubstr("gzip-compressed traces are read as they are"));
    EXPECT_EQ(r.out, "");
  }
}

TEST(ValidateCli, OutputFileGetsTheSameJson) {
  TempDir dir;
  fs::copy_file(fixture("spec_example.jsonl"), dir / "spec_example.jsonl");
  const RunResult r = run_cli({"validate", "spec_example.jsonl", "-o", "report.json"}, dir.path());
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(read_file(dir / "report.json"), kSpecExampleValidation);
  // Nothing else left behind (no temporary files).
  EXPECT_THAT(dir.entries(), ElementsAre("report.json", "spec_example.jsonl"));
}

TEST(ValidateCli, OutputLongOptionAndMissingParents) {
  TempDir dir;
  const fs::path out = dir / "a" / "b" / "v.json";
  const RunResult r =
      run_cli({"validate", fixture("spec_example.jsonl").string(), "--output", out.string()});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(nlohmann::json::parse(read_file(out))["events"], 21);
}

TEST(ValidateCli, OutputDashIsStdout) {
  const RunResult r = run_cli({"validate", "spec_example.jsonl", "-o", "-"}, CG_FIXTURE_DIR);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, kSpecExampleValidation);
}

// `-o /dev/stdout` writes to the process's standard output (here a file, as after `> out`), and
// `-o /dev/null` discards: both are written in place. Renamed over, a temporary file would take
// the link's or the device's place in /dev (as root; as another user the rename is refused and
// the run fails), and the standard output would stay empty.
TEST(ValidateCli, DevStdoutAndDevNullAreWrittenInPlace) {
  const RunResult r =
      run_cli({"validate", "spec_example.jsonl", "-o", "/dev/stdout"}, CG_FIXTURE_DIR);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, kSpecExampleValidation);
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status("/dev/stdout")));
  const RunResult discarded =
      run_cli({"validate", "spec_example.jsonl", "-o", "/dev/null"}, CG_FIXTURE_DIR);
  EXPECT_EQ(discarded.exit_code, 0) << describe(discarded);
  EXPECT_EQ(discarded.out, "");
  EXPECT_TRUE(fs::is_character_file(fs::symlink_status("/dev/null")));
}

// With --require-trusted the report is still written before exiting 3.
TEST(ValidateCli, OutputFileWithUntrustedTrace) {
  TempDir dir;
  const RunResult r = run_cli({"validate", fixture("untrusted_open_root.jsonl").string(),
                               "--require-trusted", "-o", (dir / "v.json").string()});
  EXPECT_EQ(r.exit_code, 3) << describe(r);
  EXPECT_EQ(nlohmann::json::parse(read_file(dir / "v.json"))["health"]["trusted"], false);
}

// A failing run never touches an existing output file and leaves no partial file behind.
TEST(ValidateCli, FailedRunLeavesExistingOutputAlone) {
  TempDir dir;
  write_file(dir / "bad.jsonl", "{\"kind\":\"telemetry\"}\n");
  write_file(dir / "report.json", "previous report\n");
  const RunResult r = run_cli({"validate", "bad.jsonl", "-o", "report.json"}, dir.path());
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_EQ(read_file(dir / "report.json"), "previous report\n");
  EXPECT_THAT(dir.entries(), ElementsAre("bad.jsonl", "report.json"));
}

TEST(ValidateCli, FailedRunCreatesNoOutputFile) {
  TempDir dir;
  write_file(dir / "bad.jsonl", "{\"kind\":\"telemetry\"}\n");
  const RunResult r = run_cli({"validate", "bad.jsonl", "-o", "report.json"}, dir.path());
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_THAT(dir.entries(), ElementsAre("bad.jsonl"));
}

// An existing output is replaced whole (rename), not appended to or partially overwritten.
TEST(ValidateCli, OutputReplacesAnExistingFile) {
  TempDir dir;
  fs::copy_file(fixture("spec_example.jsonl"), dir / "spec_example.jsonl");
  write_file(dir / "report.json", std::string(100000, 'x'));
  const RunResult r = run_cli({"validate", "spec_example.jsonl", "-o", "report.json"}, dir.path());
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(read_file(dir / "report.json"), kSpecExampleValidation);
}

// -o naming the input trace (under any spelling) is refused with exit 2; the trace is intact.
TEST(ValidateCli, RefusesToOverwriteTheInputTrace) {
  TempDir dir;
  fs::copy_file(fixture("spec_example.jsonl"), dir / "trace.jsonl");
  fs::create_directory(dir / "sub");
  fs::create_symlink(dir / "trace.jsonl", dir / "link.jsonl");
  fs::create_hard_link(dir / "trace.jsonl", dir / "hard.jsonl");
  const std::string original = read_file(dir / "trace.jsonl");
  for (const std::string& out :
       std::vector<std::string>{"trace.jsonl", "./trace.jsonl", "sub/../trace.jsonl",
                                (dir / "trace.jsonl").string(), "link.jsonl", "hard.jsonl"}) {
    SCOPED_TRACE(out);
    const RunResult r = run_cli({"validate", "trace.jsonl", "-o", out}, dir.path());
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_THAT(r.err, StartsWith("error: "));
    EXPECT_THAT(r.err, HasSubstr("trace.jsonl"));
    EXPECT_EQ(read_file(dir / "trace.jsonl"), original);
  }
  EXPECT_THAT(dir.entries(), ElementsAre("hard.jsonl", "link.jsonl", "sub", "trace.jsonl"));
}

TEST(ValidateCli, UsageErrors) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"validate"},
                                             {"validate", "a.jsonl", "--bogus"},
                                             {"validate", "--require-trusted=maybe", "a.jsonl"},
                                             {"validate", "a.jsonl", "b.jsonl"},
                                             {"validate", "a.jsonl", "-o"}}) {
    SCOPED_TRACE(::testing::PrintToString(args));
    const RunResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_NE(r.err, "");
  }
}

}  // namespace
