// The `kernels` table and the ops columns of trace6.md §4.5.1 (docs/sql.md), read back through
// Debian's `sqlite3` shell. Expected counts come from an independent parse of the real Kineto
// fixtures (support/kineto_reference.hpp: nlohmann, no candle-graph code); the device time total
// comes from `query --kind ops` (the evidence packet's op table), which the database must copy.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "sql/sql_test_support.hpp"
#include "support/kineto_reference.hpp"

namespace {

using cgcli::describe;
using cgcli::run_cli;
using cgcli::TempDir;
using cgsql::shell_query;
using nlohmann::json;
namespace fs = std::filesystem;

fs::path export_db(const fs::path& trace, const fs::path& db) {
  const auto r = run_cli({"export", trace.string(), "--format", "sqlite", "-o", db.string()});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  return db;
}

// Kineto's categories as the trace/6 op kinds the table names them by.
std::string kind_of(const std::string& cat) {
  if (cat == "gpu_memcpy") return "memcpy";
  if (cat == "gpu_memset") return "memset";
  if (cat == "cuda_sync") return "sync";
  return "kernel";
}

void expect_kernels_match_fixture(std::string_view name) {
  SCOPED_TRACE(std::string(name));
  if (!cgsql::have("/usr/bin/sqlite3")) GTEST_SKIP() << "no /usr/bin/sqlite3";
  TempDir dir("cg-sql");
  const fs::path trace = cgtest::kineto(name);
  const fs::path db = export_db(trace, dir / "k.db");

  std::map<std::string, long long> expected;
  for (const auto& w : cgtest::device_work_in_region(cgtest::read_json(trace)))
    ++expected[kind_of(w.cat)];
  ASSERT_FALSE(expected.empty());
  std::map<std::string, long long> got;
  for (const json& row : shell_query(db, "SELECT kind, COUNT(*) AS n FROM kernels GROUP BY kind"))
    got[row["kind"]] = row["n"];
  EXPECT_EQ(got, expected);

  // Σ device time of the work (syncs are waits) = query --kind ops' device_ns.
  const auto q = run_cli({"query", trace.string(), "--kind", "ops"});
  ASSERT_EQ(q.exit_code, 0) << describe(q);
  const json sum =
      shell_query(db, "SELECT SUM(duration_ns) AS ns FROM kernels WHERE kind != 'sync'");
  EXPECT_EQ(sum[0]["ns"], json::parse(q.out)["result"]["device_ns"]);

  // Every launch link points at the right kind of op: the runtime call with the same
  // correlation, and a host op (never a runtime call) as the launcher.
  const json bad =
      shell_query(db,
                  "SELECT COUNT(*) AS n FROM kernels k "
                  "LEFT JOIN ops r ON r.run_id = k.run_id AND r.op_index = k.runtime_op_index "
                  "LEFT JOIN ops l ON l.run_id = k.run_id AND l.op_index = k.launch_op_index "
                  "WHERE (k.runtime_op_index IS NOT NULL AND (r.op_kind != 'runtime' OR "
                  "                                          r.correlation != k.correlation)) "
                  "   OR (k.launch_op_index IS NOT NULL AND l.op_kind != 'host')");
  EXPECT_EQ(bad[0]["n"], 0);
  // The work no host op launched is query's unattributed device time.
  const json orphans = shell_query(db,
                                   "SELECT COALESCE(SUM(duration_ns), 0) AS ns FROM kernels "
                                   "WHERE kind != 'sync' AND launch_op_index IS NULL");
  EXPECT_EQ(orphans[0]["ns"], json::parse(q.out)["result"]["unattributed_device_ns"]);
}

TEST(SqlKernels, TwoStreamsWholeWindowCountsPerKind) {
  expect_kernels_match_fixture("hta-alexnet-a100-2streams.json.gz");
}

TEST(SqlKernels, MeasuredStepCountsPerKind) {
  CG_SQL_SKIP_WHEN_SANITIZED();
  expect_kernels_match_fixture("hta-sampled-rank0-of128-nccl.json.gz");
}

TEST(SqlKernels, OpsCarryKindThreadAndCorrelation) {
  if (!cgsql::have("/usr/bin/sqlite3")) GTEST_SKIP() << "no /usr/bin/sqlite3";
  TempDir dir("cg-sql");
  // No ProfilerStep: the whole window, so every cpu_op and cuda_runtime event is an op.
  const fs::path trace = cgtest::kineto("hta-alexnet-a100-2streams.json.gz");
  const fs::path db = export_db(trace, dir / "k.db");
  std::map<std::string, long long> expected;
  std::multiset<long long> correlations;
  std::set<long long> threads;
  const json source = cgtest::read_json(trace);
  for (const json& e : source.at("traceEvents")) {
    if (e.value("ph", "") != "X") continue;
    const std::string cat = e.value("cat", "");
    if (cat == "cpu_op") ++expected["host"];
    if (cat == "cpu_op" || cat == "cuda_runtime") threads.insert(e.at("tid").get<long long>());
    if (cat == "cuda_runtime") {
      ++expected["runtime"];
      if (e.contains("args") && e["args"].contains("correlation"))
        correlations.insert(e["args"]["correlation"].get<long long>());
    }
  }
  std::map<std::string, long long> got;
  for (const json& row :
       shell_query(db,
                   "SELECT op_kind, COUNT(*) AS n FROM ops WHERE thread IS NOT NULL "
                   "AND total_ns >= duration_ns GROUP BY op_kind"))
    got[row["op_kind"]] = row["n"];
  EXPECT_EQ(got, expected);
  std::multiset<long long> got_correlations;
  for (const json& row : shell_query(db,
                                     "SELECT correlation FROM ops WHERE op_kind = 'runtime' AND "
                                     "correlation IS NOT NULL"))
    got_correlations.insert(row["correlation"].get<long long>());
  EXPECT_EQ(got_correlations, correlations);
  std::set<long long> got_threads;
  for (const json& row : shell_query(db, "SELECT DISTINCT thread FROM ops"))
    got_threads.insert(row["thread"].get<long long>());
  EXPECT_EQ(got_threads, threads);
  // The indices the joins use exist.
  std::set<std::string> indices;
  for (const json& row : shell_query(db, "SELECT name FROM sqlite_master WHERE type = 'index'"))
    indices.insert(row["name"]);
  for (const char* i : {"ops_by_correlation", "kernels_key", "kernels_by_correlation"})
    EXPECT_TRUE(indices.count(i)) << i;
}

TEST(SqlKernels, HostOnlyTraceHasNoKernelsAndHostOps) {
  if (!cgsql::have("/usr/bin/sqlite3")) GTEST_SKIP() << "no /usr/bin/sqlite3";
  TempDir dir("cg-sql");
  const fs::path db = export_db(cgcli::fixture("spec_example.jsonl"), dir / "h.db");
  EXPECT_EQ(shell_query(db, "SELECT COUNT(*) AS n FROM kernels")[0]["n"], 0);
  // An op without total_ns extends over duration_ns (trace6.md §4.5.1).
  const json odd = shell_query(db,
                               "SELECT COUNT(*) AS n FROM ops WHERE op_kind != 'host' OR "
                               "total_ns != duration_ns OR device_total_ns != 0");
  EXPECT_EQ(odd[0]["n"], 0);
}

TEST(SqlKernels, AnEarlierLayoutIsRefusedForAppendAndMerge) {
  if (!cgsql::have("/usr/bin/sqlite3")) GTEST_SKIP() << "no /usr/bin/sqlite3";
  TempDir dir("cg-sql");
  const fs::path db = export_db(cgcli::fixture("spec_example.jsonl"), dir / "old.db");
  // The layout before device work: no kernels table (the shell, not our code, edits it).
  const auto edit = cgsql::run_program({"/usr/bin/sqlite3", db.string(), "DROP TABLE kernels"});
  ASSERT_EQ(edit.exit_code, 0) << describe(edit);
  const auto append = run_cli({"export", cgcli::fixture("inference_all_fields.jsonl").string(),
                               "--format", "sqlite", "-o", db.string(), "--append"});
  EXPECT_EQ(append.exit_code, 1) << describe(append);
  EXPECT_NE(append.err.find("earlier layout"), std::string::npos) << append.err;
  const auto merge =
      run_cli({"sql", db.string(), cgcli::fixture("inference_all_fields.jsonl").string(),
               "SELECT COUNT(*) FROM runs"});
  EXPECT_EQ(merge.exit_code, 1) << describe(merge);
  // Alone, it still answers (opened read-only as it is).
  const auto alone = run_cli({"sql", db.string(), "SELECT COUNT(*) FROM ops"});
  EXPECT_EQ(alone.exit_code, 0) << describe(alone);
}

}  // namespace
