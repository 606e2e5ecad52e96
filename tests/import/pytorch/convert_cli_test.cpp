// The `convert` command end to end, and item 5 of the issue: the viewer, `report` and `compare`
// work on converted traces unchanged (the real executable, the real Kineto fixtures).
#include "cli/cli_test_support.hpp"
#include "support/convert_helpers.hpp"

namespace cgimport {
namespace {

using cgcli::describe;
using cgcli::run_cli;

TEST(ConvertCli, ConvertsAndReportsRepairsOnStderr) {
  TempDir dir;
  const auto r = run_cli({"convert", shared_fixture("hta-cuda-event-sync-a100.json").string(), "-o",
                          (dir / "t.jsonl").string()});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  // 10 cpu_op + 12 runtime calls + 9 device ops (kineto_fixture_test.cpp has the jq counts).
  EXPECT_NE(r.err.find("31 ops (9 on GPUs)"), std::string::npos) << r.err;
  const auto v = run_cli({"validate", (dir / "t.jsonl").string(), "--require-trusted"});
  EXPECT_EQ(v.exit_code, 0) << describe(v);
}

TEST(ConvertCli, ErrorsAndUsage) {
  TempDir dir;
  const fs::path bad = dir.write("bad.json", R"({"traceEvents": [{"ph": "X", "ts": }]})");
  auto r = run_cli({"convert", bad.string(), "-o", (dir / "t.jsonl").string()});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.err.find(bad.string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("at byte 17"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "t.jsonl"));
  r = run_cli({"convert", bad.string()});  // no -o
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  r = run_cli({"convert", bad.string(), "-o", bad.string()});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  r = run_cli({"convert", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Example"), std::string::npos) << r.out;
}

TEST(ConvertCli, ViewerReportAndCompareWorkOnConvertedTraces) {
  TempDir dir;
  const std::string a = (dir / "a.jsonl").string(), b = (dir / "b.jsonl").string();
  ASSERT_EQ(run_cli({"convert", shared_fixture("hta-minitoy-train-mi250-rocm6.2.json").string(),
                     "-o", a, "-q"})
                .exit_code,
            0);
  ASSERT_EQ(run_cli({"convert", shared_fixture("hta-minitoy-train-mi250-rocm6.2.json").string(),
                     "-o", b, "-q", "--step", "1"})
                .exit_code,
            0);
  auto r = run_cli({"view", a, "-o", (dir / "viewer.html").string()});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(slurp(dir / "viewer.html").find("ProfilerStep#1"), std::string::npos);
  r = run_cli(
      {"report", a, "--json", (dir / "e.json").string(), "--markdown", (dir / "r.md").string()});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(slurp(dir / "r.md").find("ProfilerStep#1"), std::string::npos);
  r = run_cli({"compare", a, b, "-o", (dir / "c.json").string()});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(slurp(dir / "c.json").find("candle-graph/comparison/1"), std::string::npos);
  // The GPU fixture without ProfilerStep too (kernels on cuda:0, 10 spans).
  const std::string s = (dir / "s.jsonl").string();
  ASSERT_EQ(run_cli({"convert", shared_fixture("hta-simple_add-a100.json").string(), "-o", s, "-q"})
                .exit_code,
            0);
  r = run_cli({"import", s, "-o", (dir / "s-evidence.json").string()});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  r = run_cli({"view", s, "-o", (dir / "s.html").string()});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
}

}  // namespace
}  // namespace cgimport
