// The analysis commands end to end through the real binary: outputs, exit codes, errors.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/evidence_helpers.hpp"

namespace fs = std::filesystem;
using cg_test::fixture_path;
using cg_test::run_cli;

namespace {

struct Cli : ::testing::Test {
  fs::path dir;
  std::string example = fixture_path("spec_example.jsonl");
  std::string untrusted;
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("cg_evidence_" +
           std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    // The spec example without its last line: root s1 never closed → health open_span error.
    std::string text = cg_test::read_file(example);
    text.erase(text.rfind("{\"kind\":\"span_end\",\"id\":\"s1\""));
    untrusted = (dir / "open.jsonl").string();
    FILE* f = std::fopen(untrusted.c_str(), "wb");
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  void TearDown() override { fs::remove_all(dir); }
};

TEST_F(Cli, ImportWritesTheEvidencePacket) {
  const auto r = run_cli("import " + example);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::ordered_json::parse(r.out);
  EXPECT_EQ(j["schema"], "candle-graph/evidence/1");
  EXPECT_EQ(j["graph"]["schema"], "candle-graph/graph/3");
  EXPECT_EQ(j["gpu"]["status"], "unavailable");
  EXPECT_EQ(r.out.substr(0, 4), "{\n  ");  // 2-space pretty
  EXPECT_EQ(r.out.back(), '\n');           // one trailing newline
  EXPECT_NE(r.out.find("\"total_ms\": 13.0"), std::string::npos);
  // -o writes the same bytes to a file (parents created).
  const auto out = dir / "sub" / "evidence.json";
  ASSERT_EQ(run_cli("import " + example + " -o " + out.string()).exit_code, 0);
  EXPECT_EQ(cg_test::read_file(out.string()), r.out);
}

TEST_F(Cli, SummaryKeysAreSorted) {
  const auto r = run_cli("summary " + example);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::ordered_json::parse(r.out);
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"findings", "gaps", "health", "provenance", "schema",
                                            "summary"}));
  EXPECT_EQ(j["schema"], "candle-graph/summary/1");
  EXPECT_EQ(j["summary"]["slowest_spans"][0]["id"], "s4");
  std::vector<std::string> prov;
  for (const auto& [k, v] : j["provenance"].items()) prov.push_back(k);
  EXPECT_TRUE(std::is_sorted(prov.begin(), prov.end()));
}

TEST_F(Cli, QueryKinds) {
  for (const char* kind :
       {"slowest", "heaviest", "memory", "efficiency", "spans", "tensors", "gradients"}) {
    const auto r = run_cli("query " + example + " --kind " + kind);
    ASSERT_EQ(r.exit_code, 0) << kind << r.err;
    const auto j = nlohmann::ordered_json::parse(r.out);
    EXPECT_EQ(j["result"]["schema"], "candle-graph/trace-query/1");
    EXPECT_EQ(j["result"]["kind"], kind);
    EXPECT_EQ(j["result"]["entrypoint"], "demo::train::update");
    std::vector<std::string> keys;
    for (const auto& [k, v] : j["result"].items()) keys.push_back(k);
    EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end())) << kind;
  }
  // slowest ops: s3/op/0 (3 ms) then s5/op/0 (0.4 ms); --limit 1 keeps the first.
  auto j = nlohmann::json::parse(run_cli("query " + example + " --kind slowest").out);
  ASSERT_EQ(j["result"]["slowest_ops"].size(), 2u);
  EXPECT_EQ(j["result"]["slowest_ops"][0]["id"], "s3/op/0");
  j = nlohmann::json::parse(run_cli("query " + example + " --kind slowest --limit 1").out);
  EXPECT_EQ(j["result"]["slowest_ops"].size(), 1u);
  // efficiency: s5/op/0 8192 B / 400000 ns = 0.02048 beats s3/op/0 2048 / 3000000.
  j = nlohmann::json::parse(run_cli("query " + example + " --kind efficiency").out);
  EXPECT_EQ(j["result"]["ops"][0]["id"], "s5/op/0");
  // spans: 7 nodes and 8 edges, unbounded.
  j = nlohmann::json::parse(run_cli("query " + example + " --kind spans").out);
  EXPECT_EQ(j["result"]["spans"].size(), 7u);
  EXPECT_EQ(j["result"]["edges"].size(), 8u);
  EXPECT_EQ(run_cli("query " + example + " --kind nope").exit_code, 2);
  // A bad --limit is a usage error whose message a person can read (it once quoted DBL_MAX).
  for (const char* limit : {"-3", "0", "many"}) {
    const auto bad = run_cli("query " + example + " --kind slowest --limit " + limit);
    EXPECT_EQ(bad.exit_code, 2) << limit;
    EXPECT_THAT(bad.err, ::testing::HasSubstr("--limit")) << bad.err;
    EXPECT_LT(bad.err.size(), 200u) << bad.err;
  }
}

TEST_F(Cli, UntrustedTraceFailsWithTheOriginalMessage) {
  for (const char* cmd : {"import", "summary", "query --kind slowest"}) {
    const auto r =
        run_cli(std::string(cmd).substr(0, std::string(cmd).find(' ')) + " " + untrusted +
                (std::string(cmd).find(' ') != std::string::npos
                     ? std::string(cmd).substr(std::string(cmd).find(' '))
                     : std::string()));
    EXPECT_EQ(r.exit_code, 1) << cmd;
    EXPECT_NE(r.err.find("trace is structurally untrusted: span `s1` was not closed"),
              std::string::npos)
        << r.err;
    EXPECT_TRUE(r.out.empty());
  }
  const auto md = dir / "r.md";
  const auto r = run_cli("report " + untrusted + " --json " + (dir / "r.json").string() +
                         " --markdown " + md.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(fs::exists(dir / "r.json"));  // no partial output
  EXPECT_FALSE(fs::exists(md));
}

TEST_F(Cli, CompareWorksOnUntrustedTraces) {
  const auto r = run_cli("compare " + example + " " + untrusted);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::ordered_json::parse(r.out);
  EXPECT_EQ(j["schema"], "candle-graph/comparison/1");
  EXPECT_FALSE(j["comparable"]);
  EXPECT_TRUE(j["warnings"].empty());
  const auto self =
      nlohmann::ordered_json::parse(run_cli("compare " + example + " " + example).out);
  EXPECT_EQ(self["total_delta_percent"].get<double>(), 0.0);
  EXPECT_NE(run_cli("compare " + example + " " + example).out.find("\"total_delta_percent\": 0.0"),
            std::string::npos);
}

TEST_F(Cli, ReportWritesJsonAndMarkdown) {
  const auto json = dir / "out" / "evidence.json", md = dir / "out" / "evidence.md";
  const auto r = run_cli("report " + example + " --baseline " + example + " --json " +
                         json.string() + " --markdown " + md.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::ordered_json::parse(cg_test::read_file(json.string()));
  EXPECT_EQ(j["comparison"]["schema"], "candle-graph/comparison/1");
  const std::string text = cg_test::read_file(md.string());
  EXPECT_EQ(text.rfind("# candle-graph evidence\n", 0), 0u);
  EXPECT_NE(text.find("Total time changed by +0.00%."), std::string::npos);
}

// Any one output will do; none at all is a usage error that lists them. The expected files are
// the ones named on the command line, and the JSON alone is the same bytes as beside the report.
TEST_F(Cli, ReportWritesTheOutputsItIsGiven) {
  const auto json = dir / "evidence.json", md = dir / "report.md", only = dir / "only.json";
  ASSERT_EQ(run_cli("report " + example + " --json " + json.string() + " --markdown " + md.string())
                .exit_code,
            0);
  const auto r = run_cli("report " + example + " --json " + only.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(cg_test::read_file(only.string()), cg_test::read_file(json.string()));
  const auto alone = dir / "alone.md";
  ASSERT_EQ(run_cli("report " + example + " --markdown " + alone.string()).exit_code, 0);
  EXPECT_EQ(cg_test::read_file(alone.string()), cg_test::read_file(md.string()));
  // The headline alone: the same top lines as with the files, and no list of outputs.
  const auto with_files = run_cli("report " + example + " --json " + json.string() +
                                  " --markdown " + md.string() + " --headline");
  const auto headline = run_cli("report " + example + " --headline");
  ASSERT_EQ(headline.exit_code, 0) << headline.err;
  EXPECT_EQ(headline.out, with_files.out.substr(0, with_files.out.find("\nOutputs:\n")));
  EXPECT_EQ(headline.out.find("Outputs:"), std::string::npos);
  const auto none = run_cli("report " + example);
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("report needs an output: any of --json FILE, --markdown FILE"),
            std::string::npos)
      << none.err;
}

TEST_F(Cli, RefusesToOverwriteTheInput) {
  const auto copy = dir / "trace.jsonl";
  fs::copy_file(example, copy);
  const std::string before = cg_test::read_file(copy.string());
  const auto r = run_cli("import " + copy.string() + " -o " + copy.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("refusing to write output over the input file"), std::string::npos);
  EXPECT_EQ(cg_test::read_file(copy.string()), before);
}

TEST_F(Cli, HelpTeachesWithAnExample) {
  for (const char* cmd : {"import", "summary", "query", "compare", "report"}) {
    const auto r = run_cli(std::string(cmd) + " --help");
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.out.find("Example: candle-graph " + std::string(cmd)), std::string::npos) << cmd;
  }
}

TEST_F(Cli, NsightDirIsPassedThrough) {
  const auto r = run_cli("import " + example + " --nsight-dir " + (dir / "missing").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["gpu"]["status"], "failed");  // trace6.md §10.2: a load error, not a crash
}

}  // namespace
