// The steps a database write reports (sqlite::StepProgress, the CLI's progress lines): each
// step's total must be the rows it writes or indexes. The totals are checked against the finished
// database, counted by Debian's sqlite3 shell (COUNT(*) of every table, and of each index's table
// for the indices built after the load), not by the loader's own counting.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "candle_graph/import.hpp"
#include "evidence/packet_builder.hpp"
#include "sql/sql_test_support.hpp"
#include "sqlite/sqlite_export.hpp"
#include "support/files.hpp"

namespace {

namespace fs = std::filesystem;
using cgcli::TempDir;
using cgsql::shell_query;
using nlohmann::json;

struct Step {
  std::vector<std::uint64_t> done;
  std::uint64_t total = 0;
};

// The steps in the order they came, each with every `done` it reported.
std::vector<std::pair<std::string, Step>> write_watched(const fs::path& trace, const fs::path& db) {
  std::vector<std::pair<std::string, Step>> steps;
  const candle_graph::sqlite::StepProgress watch = [&](std::string_view name, std::uint64_t done,
                                                       std::uint64_t total) {
    if (steps.empty() || steps.back().first != name) steps.push_back({std::string(name), {}});
    Step& s = steps.back().second;
    EXPECT_TRUE(s.done.empty() || s.total == total) << name << ": the total changed";
    s.total = total;
    s.done.push_back(done);
  };
  const candle_graph::TraceDocument doc = candle_graph::import_trace(trace).document;
  candle_graph::sqlite::DatabaseFile file(db, false);
  file.add_run(
      doc, trace.string(),
      [&] {
        return candle_graph::evidence::build_packet(doc, nullptr, std::nullopt, std::nullopt);
      },
      watch);
  file.commit(watch);
  return steps;
}

std::uint64_t rows_of(const fs::path& db, const std::string& table) {
  return shell_query(db, "SELECT COUNT(*) AS n FROM " + table)[0]["n"].get<std::uint64_t>();
}

void expect_steps_count_the_database(const fs::path& trace) {
  SCOPED_TRACE(trace.filename().string());
  if (!cgsql::have("/usr/bin/sqlite3")) GTEST_SKIP() << "no /usr/bin/sqlite3";
  TempDir dir("cg-sql");
  const fs::path db = dir / "watched.db";
  const auto steps = write_watched(trace, db);

  // Rows: the tables that need only the trace, then every other table but `schema`.
  const std::vector<std::string> trace_tables{"op_inputs", "tensors", "memory_events",
                                              "device_memory", "gradients"};
  std::uint64_t trace_rows = 0, other_rows = 0;
  for (const json& t : shell_query(db, "SELECT name FROM sqlite_master WHERE type = 'table'")) {
    const std::string name = t["name"];
    const bool of_trace =
        std::find(trace_tables.begin(), trace_tables.end(), name) != trace_tables.end();
    if (name != "schema") (of_trace ? trace_rows : other_rows) += rows_of(db, name);
  }

  // Indices built after the load: all but the primary key's and those kept up to date during it
  // (docs/sql.md: the (run_id, *_index) keys and op_inputs (op_index, run_id)).
  const std::vector<std::string> during_load{"spans_key",         "ops_key",     "tensors_key",
                                             "memory_events_key", "kernels_key", "op_inputs_by_op"};
  std::uint64_t indexed = 0;
  for (const json& i : shell_query(db,
                                   "SELECT name, tbl_name FROM sqlite_master "
                                   "WHERE type = 'index' AND sql IS NOT NULL")) {
    const std::string name = i["name"];
    if (std::find(during_load.begin(), during_load.end(), name) == during_load.end())
      indexed += rows_of(db, i["tbl_name"]);
  }

  // A step with nothing to write is not reported.
  std::vector<std::pair<std::string, std::uint64_t>> expected;
  for (const auto& [name, total] :
       {std::pair<std::string, std::uint64_t>{"trace tables", trace_rows},
        {"analysis tables", other_rows},
        {"indices", indexed}})
    if (total > 0) expected.emplace_back(name, total);
  std::vector<std::pair<std::string, std::uint64_t>> got;
  for (const auto& [name, step] : steps) {
    SCOPED_TRACE(name);
    got.emplace_back(name, step.total);
    ASSERT_FALSE(step.done.empty());
    EXPECT_EQ(step.done.front(), 0u);
    EXPECT_EQ(step.done.back(), step.total);
    for (std::size_t i = 1; i < step.done.size(); ++i) EXPECT_GE(step.done[i], step.done[i - 1]);
  }
  EXPECT_EQ(got, expected);
}

TEST(SqlWriteProgress, StepsCountTheRowsOfASynthTrace) {
  // Every step has rows: op inputs, tensors, memory events and gradients come from the trace.
  TempDir dir("cg-sql");
  const fs::path trace = dir / "synth.jsonl";
  const auto r = cgcli::run_cli(
      {"synth", "--layers", "40", "--ops-per-span", "3", "--seed", "11", "-o", trace.string()});
  ASSERT_EQ(r.exit_code, 0) << cgcli::describe(r);
  expect_steps_count_the_database(trace);
}

TEST(SqlWriteProgress, StepsCountTheRowsOfAKinetoTraceWithDeviceWork) {
  expect_steps_count_the_database(
      candle_graph::testing::shared_fixture("pytorch-chrome-trace/hta-simple_add-a100.json"));
}

}  // namespace
