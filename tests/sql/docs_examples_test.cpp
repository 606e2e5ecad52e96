// Every ```sql example of docs/sql.md runs (exit 0, a JSON result) against a database of two
// synth runs, so the documentation cannot drift from the schema. The run ids the examples use
// are mapped to the two synth runs.
#include <gtest/gtest.h>

#include <regex>

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

  const std::regex block("```sql\n([^`]*)```");
  int examples = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), block);
       it != std::sregex_iterator(); ++it) {
    std::string sql = (*it)[1].str();
    for (const auto& [from, to] :
         {std::pair<std::string, std::string>{"'baseline-run'", "'run-synth-1'"},
          {"'candidate-run'", "'run-synth-2'"}})
      for (std::size_t at = sql.find(from); at != std::string::npos; at = sql.find(from))
        sql.replace(at, from.size(), to);
    SCOPED_TRACE(sql);
    const auto r = run_cli({"sql", db.string(), sql});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    ++examples;
  }
  EXPECT_GE(examples, 8);
}

}  // namespace
