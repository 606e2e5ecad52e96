// a bundle directory is an input of import, summary, query, view, compare and
// report (verified first; a bundle that does not verify is refused), and no command writes inside
// a bundle, however the path reaches it (`..`, a symlink, a directory still to be created).
#include <gmock/gmock.h>

#include "bundle_test_support.hpp"

namespace {

using namespace cgbundle;
using ::testing::HasSubstr;

class BundleInput : public ::testing::Test {
 protected:
  void SetUp() override {
    in_ = make_inputs(tmp_.path());
    const RunResult r = publish(in_, bundle_, /*with_baseline=*/false);
    ASSERT_EQ(r.exit_code, 0) << cgcli::describe(r);
  }
  cgcli::TempDir tmp_;
  Inputs in_;
  fs::path bundle_ = tmp_ / "bundle";
};

// The bundle stands for its trace and its nsight/ files: outputs equal those of the explicit
// inputs, and import's packet is the bundle's own evidence.json.
TEST_F(BundleInput, EveryAnalysisCommandReadsABundle) {
  const std::string b = bundle_.string(), trace = (bundle_ / "trace.jsonl").string(),
                    nsight = (bundle_ / "nsight").string();
  const RunResult imp = run_cli({"import", b});
  ASSERT_EQ(imp.exit_code, 0) << cgcli::describe(imp);
  EXPECT_EQ(imp.out, read_file(bundle_ / "evidence.json"));
  const RunResult sum = run_cli({"summary", b});
  ASSERT_EQ(sum.exit_code, 0) << cgcli::describe(sum);
  EXPECT_EQ(sum.out, run_cli({"summary", trace, "--nsight-dir", nsight}).out);
  const RunResult q = run_cli({"query", b, "--kind", "slowest"});
  ASSERT_EQ(q.exit_code, 0) << cgcli::describe(q);
  EXPECT_THAT(q.out, HasSubstr("candle-graph/trace-query/1"));
  const RunResult v = run_cli({"view", b, "-o", (tmp_ / "v.html").string()});
  ASSERT_EQ(v.exit_code, 0) << cgcli::describe(v);
  EXPECT_EQ(read_file(tmp_ / "v.html"), read_file(bundle_ / "viewer.html"));
  const RunResult c = run_cli({"compare", b, in_.baseline.string()});
  ASSERT_EQ(c.exit_code, 0) << cgcli::describe(c);
  EXPECT_EQ(c.out, run_cli({"compare", trace, in_.baseline.string()}).out);
  const RunResult rep = run_cli(
      {"report", b, "--json", (tmp_ / "e.json").string(), "--markdown", (tmp_ / "r.md").string()});
  ASSERT_EQ(rep.exit_code, 0) << cgcli::describe(rep);
  EXPECT_EQ(read_file(tmp_ / "e.json"), read_file(bundle_ / "evidence.json"));
  // A bundle republished from a bundle holds the same trace.
  const RunResult again = run_cli({"report", b, "--bundle", (tmp_ / "again").string()});
  ASSERT_EQ(again.exit_code, 0) << cgcli::describe(again);
  EXPECT_EQ(read_file(tmp_ / "again" / "evidence.json"), read_file(bundle_ / "evidence.json"));
}

TEST_F(BundleInput, ABundleThatDoesNotVerifyIsRefused) {
  flip_byte(bundle_ / "trace.jsonl", 100);
  const std::string b = bundle_.string();
  const std::vector<std::vector<std::string>> commands = {
      {"import", b},
      {"summary", b},
      {"query", b, "--kind", "memory"},
      {"view", b, "-o", (tmp_ / "v.html").string()},
      {"compare", in_.baseline.string(), b},
      {"report", b, "--json", (tmp_ / "e.json").string(), "--markdown", (tmp_ / "r.md").string()},
      {"report", b, "--bundle", (tmp_ / "again").string()}};
  for (const auto& args : commands) {
    const RunResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 1) << args[0] << "\n" << cgcli::describe(r);
    EXPECT_THAT(r.err, HasSubstr("does not verify")) << args[0];
    EXPECT_THAT(r.err, HasSubstr("trace.jsonl: hash_mismatch")) << args[0];
  }
  EXPECT_FALSE(fs::exists(tmp_ / "v.html"));
  EXPECT_FALSE(fs::exists(tmp_ / "again"));
}

TEST_F(BundleInput, NoCommandWritesInsideABundle) {
  const std::string trace = in_.trace.string();
  fs::create_directory_symlink(bundle_, tmp_ / "link");
  fs::create_directory(tmp_ / "elsewhere");
  // A Chrome export of the trace, for `convert` (written outside the bundle, so allowed).
  const std::string chrome_export = (tmp_ / "trace.chrome.json").string();
  ASSERT_EQ(run_cli({"export", trace, "--format", "chrome", "-o", chrome_export}).exit_code, 0);
  const std::vector<std::string> targets = {
      (bundle_ / "x.json").string(),                          // plainly inside
      (bundle_ / "nsight" / "x.csv").string(),                // in a subdirectory
      (tmp_ / "elsewhere" / ".." / "bundle" / "x").string(),  // through `..`
      (tmp_ / "link" / "x.json").string(),                    // through a symlink
      (bundle_ / "new" / "deeper" / "x.json").string(),       // directories to create
      (bundle_ / "evidence.json").string()};                  // over a bundle file
  // Every writing command once, then each way of reaching the bundle with two of them.
  for (const auto& out : targets) {
    std::vector<std::vector<std::string>> commands = {
        {"import", trace, "-o", out},
        {"summary", trace, "-o", out},
        {"query", trace, "--kind", "slowest", "-o", out},
        {"validate", trace, "-o", out},
        {"compare", trace, trace, "-o", out},
        {"view", trace, "-o", out},
        {"synth", "--layers", "2", "-o", out},
        {"report", trace, "--json", out, "--markdown", (tmp_ / "r.md").string()},
        {"report", trace, "--markdown", out, "--json", (tmp_ / "e.json").string()},
        {"verify", bundle_.string(), "-o", out},
        {"export", trace, "--format", "chrome", "-o", out},
        {"export", trace, "--format", "sqlite", "-o", out},
        {"convert", chrome_export, "-o", out},
        {"compare", "--baseline", trace, "--candidate", trace, "-o", out},
        {"report", trace, "--bundle", out}};
    if (out != targets.front()) commands = {commands.front(), commands.back()};
    if (kStride > 1 && out != targets.front()) commands.resize(1);
    for (const auto& args : commands) {
      const RunResult r = run_cli(args);
      EXPECT_EQ(r.exit_code, 2) << out << " " << args[0] << "\n" << cgcli::describe(r);
      EXPECT_THAT(r.err, HasSubstr("inside the evidence bundle")) << out << " " << args[0];
    }
  }
  EXPECT_FALSE(fs::exists(bundle_ / "new"));
  const RunResult v = run_cli({"verify", bundle_.string()});
  EXPECT_EQ(v.exit_code, 0) << cgcli::describe(v);  // untouched
}

}  // namespace
