// Every ```sql example of docs/sql.md runs (exit 0, a JSON result) against a database of two
// synth runs, so the documentation cannot drift from the schema. The run ids the examples use
// are mapped to the two synth runs.
#include <gtest/gtest.h>

#include "sql/sql_test_support.hpp"

namespace {

using cgcli::describe;
using cgcli::run_cli;
using cgcli::TempDir;
namespace fs = std::filesystem;

TEST(SqlDocs, EveryExampleQueryRuns) {
  const fs::path doc = fs::path(CG_FIXTURE_DIR) / ".." / ".." / "docs" / "sql.md";
  const std::string text = cgcli::read_file(doc);
  ASSERT_FALSE(text.empty()) << doc;
  TempDir dir("cg-sql");
  std::vector<std::string> args{"export"};
  for (int seed : {1, 2}) {
    const fs::path trace = dir / ("s" + std::to_string(seed) + ".jsonl");
    ASSERT_EQ(
        run_cli({"synth", "--layers", "4", "--seed", std::to_string(seed), "-o", trace.string()})
            .exit_code,
        0);
    args.push_back(trace.string());
  }
  const fs::path db = dir / "runs.db";
  args.insert(args.end(), {"--format", "sqlite", "-o", db.string()});
  ASSERT_EQ(run_cli(args).exit_code, 0);

  // Each ```sql fenced block (plain string search: <regex> draws GCC 12 warnings under ASan).
  int examples = 0;
  const std::string open = "```sql\n";
  for (std::size_t at = text.find(open); at != std::string::npos; at = text.find(open, at)) {
    at += open.size();
    const std::size_t end = text.find("```", at);
    ASSERT_NE(end, std::string::npos);
    std::string sql = text.substr(at, end - at);
    at = end + 3;
    for (const auto& [from, to] :
         {std::pair<std::string, std::string>{"'baseline-run'", "'run-synth-1'"},
          {"'candidate-run'", "'run-synth-2'"}})
      for (std::size_t p = sql.find(from); p != std::string::npos; p = sql.find(from))
        sql.replace(p, from.size(), to);
    SCOPED_TRACE(sql);
    const auto r = run_cli({"sql", db.string(), sql});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    ++examples;
  }
  EXPECT_GE(examples, 8);
}

}  // namespace
