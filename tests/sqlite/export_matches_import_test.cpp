// The database holds the evidence packet's numbers: every value below is read back through
// Debian's `sqlite3` shell (a real client, not our own code) and compared with what `import`
// writes for the same trace. Expected values are never written down here: they come from the
// import JSON of the same run, so the test fails whenever the database and graph/3 disagree.
#include <gtest/gtest.h>

#include "sql/sql_test_support.hpp"

namespace {

using cgcli::describe;
using cgcli::fixture;
using cgcli::run_cli;
using cgcli::TempDir;
using cgsql::shell_query;
using nlohmann::json;
namespace fs = std::filesystem;

json import_json(const fs::path& trace) {
  const auto r = run_cli({"import", trace.string()});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  return json::parse(r.out);
}

fs::path export_one(const fs::path& trace, const fs::path& db) {
  const auto r = run_cli({"export", trace.string(), "--format", "sqlite", "-o", db.string()});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  return db;
}

// Compares the database of one exported trace with the trace's import JSON.
void expect_database_matches_import(const fs::path& trace) {
  SCOPED_TRACE(trace.string());
  TempDir dir("cg-sql");
  const fs::path db = export_one(trace, dir / "runs.db");
  const json packet = import_json(trace);
  const json& graph = packet["graph"];

  // graph/3 nodes: span nodes in document order, then op nodes (those carry storage_bytes).
  json span_nodes = json::array(), op_nodes = json::array();
  std::uint64_t span_self_sum = 0;
  for (const json& node : graph["spans"]) {
    if (node.contains("storage_bytes")) {
      op_nodes.push_back(node);
    } else {
      span_nodes.push_back(node);
      span_self_sum += node["self_time_ns"].get<std::uint64_t>();
    }
  }

  const json spans =
      shell_query(db,
                  "SELECT span_id, name, self_time_ns, total_time_ns, bytes, peak_bytes FROM spans "
                  "ORDER BY span_index");
  ASSERT_EQ(spans.size(), span_nodes.size());
  for (std::size_t i = 0; i < spans.size(); ++i) {
    EXPECT_EQ(spans[i]["span_id"], span_nodes[i]["id"]);
    EXPECT_EQ(spans[i]["name"], span_nodes[i]["name"]);
    EXPECT_EQ(spans[i]["self_time_ns"], span_nodes[i]["self_time_ns"]) << i;
    EXPECT_EQ(spans[i]["total_time_ns"], span_nodes[i]["total_time_ns"]) << i;
    EXPECT_EQ(spans[i]["bytes"], span_nodes[i]["bytes"]) << i;
    EXPECT_EQ(spans[i]["peak_bytes"], span_nodes[i]["peak_bytes"]) << i;
  }
  // The per-span self times summed in SQL (table and view) equal the graph/3 sum.
  const json sums = shell_query(db,
                                "SELECT (SELECT SUM(self_time_ns) FROM spans) AS t, "
                                "(SELECT SUM(self_time_ns) FROM span_costs) AS v");
  if (!span_nodes.empty()) {
    EXPECT_EQ(sums[0]["t"].get<std::uint64_t>(), span_self_sum);
    EXPECT_EQ(sums[0]["v"].get<std::uint64_t>(), span_self_sum);
  }

  const json ops =
      shell_query(db,
                  "SELECT node_id, op_name, self_time_ns, duration_ns, storage_bytes FROM ops "
                  "ORDER BY op_index");
  ASSERT_EQ(ops.size(), op_nodes.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    EXPECT_EQ(ops[i]["node_id"], op_nodes[i]["id"]);
    EXPECT_EQ(ops[i]["op_name"], op_nodes[i]["name"]);
    EXPECT_EQ(ops[i]["self_time_ns"], op_nodes[i]["self_time_ns"]);
    EXPECT_EQ(ops[i]["storage_bytes"], op_nodes[i]["storage_bytes"]);
  }

  // Op counts equal the coverage: the ops table, op_stats' calls, and the runs row.
  const json& coverage = packet["health"]["coverage"];
  const json counts = shell_query(
      db,
      "SELECT (SELECT COUNT(*) FROM ops) AS ops, "
      "(SELECT COALESCE(SUM(calls), 0) FROM op_stats) AS calls, "
      "(SELECT coverage_operations FROM runs) AS coverage, "
      "(SELECT COUNT(*) FROM spans) AS spans, (SELECT COUNT(*) FROM edges) AS edges, "
      "(SELECT COUNT(*) FROM memory_events) AS memory, "
      "(SELECT COUNT(*) FROM memory_timeline) AS timeline, "
      "(SELECT COUNT(*) FROM live_at_peak) AS live, (SELECT COUNT(*) FROM tensors) AS tensors, "
      "(SELECT COUNT(*) FROM gradients) AS gradients");
  EXPECT_EQ(counts[0]["ops"], coverage["operations"]);
  EXPECT_EQ(counts[0]["calls"], coverage["operations"]);
  EXPECT_EQ(counts[0]["coverage"], coverage["operations"]);
  EXPECT_EQ(counts[0]["spans"], coverage["spans"]);
  EXPECT_EQ(counts[0]["memory"], coverage["memory_events"]);
  EXPECT_EQ(counts[0]["tensors"].get<std::size_t>(), graph["tensors"].size());
  EXPECT_EQ(counts[0]["gradients"].get<std::size_t>(), graph["gradients"].size());
  EXPECT_EQ(counts[0]["edges"].get<std::size_t>(), graph["edges"].size());
  EXPECT_EQ(counts[0]["timeline"].get<std::size_t>(), graph["memory"]["timeline"].size());
  EXPECT_EQ(counts[0]["live"].get<std::size_t>(), graph["memory"]["peak_breakdown"].size());

  // The peak equals the evidence packet's.
  const json& memory = graph["memory"]["summary"];
  const json run = shell_query(db,
                               "SELECT peak_bytes, peak_timestamp_ns, total_alloc_bytes, trusted, "
                               "total_ms FROM runs")[0];
  EXPECT_EQ(run["peak_bytes"], memory["peak_bytes"]);
  EXPECT_EQ(run["peak_timestamp_ns"], memory["peak_timestamp_ns"]);
  EXPECT_EQ(run["total_alloc_bytes"], memory["total_alloc_bytes"]);
  EXPECT_EQ(run["trusted"], 1);
  EXPECT_DOUBLE_EQ(run["total_ms"].get<double>(), graph["summary"]["total_ms"].get<double>());

  // Findings, facts and gaps, in order.
  const json findings = shell_query(db, "SELECT text FROM findings ORDER BY finding_index");
  ASSERT_EQ(findings.size(), packet["findings"].size());
  for (std::size_t i = 0; i < findings.size(); ++i)
    EXPECT_EQ(findings[i]["text"], packet["findings"][i]);
  const json facts = shell_query(db, "SELECT code, value FROM facts ORDER BY fact_index");
  ASSERT_EQ(facts.size(), packet["facts"].size());
  for (std::size_t i = 0; i < facts.size(); ++i) {
    EXPECT_EQ(facts[i]["code"], packet["facts"][i]["code"]);
    EXPECT_DOUBLE_EQ(facts[i]["value"].get<double>(), packet["facts"][i]["value"].get<double>());
  }
  const json gaps = shell_query(db, "SELECT text FROM gaps ORDER BY gap_index");
  ASSERT_EQ(gaps.size(), packet["gaps"].size());
  for (std::size_t i = 0; i < gaps.size(); ++i) EXPECT_EQ(gaps[i]["text"], packet["gaps"][i]);

  // The same numbers through `candle-graph sql` straight from the trace (in-memory database).
  const json direct =
      cgsql::cg_sql({trace.string(), "SELECT SUM(self_time_ns) AS s, COUNT(*) AS n FROM spans"});
  if (!span_nodes.empty()) {
    EXPECT_EQ(direct["rows"][0][0].get<std::uint64_t>(), span_self_sum);
  }
}

TEST(SqlExport, FixturesMatchImport) {
  for (const char* name : {"spec_example.jsonl", "inference_all_fields.jsonl",
                           "evidence/edge_cases.jsonl", "evidence/spec_example.jsonl"})
    expect_database_matches_import(fixture(name));
}

TEST(SqlExport, SynthTraceMatchesImport) {
  CG_SQL_SKIP_WHEN_SANITIZED();
  TempDir dir("cg-sql");
  const fs::path trace = dir / "synth.jsonl";
  const auto r = run_cli(
      {"synth", "--layers", "40", "--ops-per-span", "3", "--seed", "11", "-o", trace.string()});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  expect_database_matches_import(trace);
}

TEST(SqlExport, LibTorchCaptureMatchesImport) {
  CG_SQL_SKIP_WHEN_SANITIZED();
  const fs::path train =
      fs::path(CG_BINARY).parent_path() / "integrations" / "torch" / "torch_train";
  if (!fs::exists(train))
    GTEST_SKIP() << train << " was not built (LibTorch not found): no LibTorch capture to check";
  TempDir dir("cg-sql");
  const fs::path trace = dir / "torch.jsonl";
  const auto r = cgsql::run_program(
      {train.string(), "--capture-step", "3", "--steps", "5", "-o", trace.string()});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  expect_database_matches_import(trace);
}

}  // namespace

namespace {

// --nsight-dir: the GPU evidence rows equal import's `gpu` member for the same directory (real
// `nsys stats` reports from /work/shared/fixtures/nsys, see SOURCES.md there).
TEST(SqlExport, NsightRowsMatchImport) {
  const fs::path shared = fs::path(CG_SHARED_FIXTURE_DIR) / "nsys";
  const fs::path kernels = shared / "cuda_gpu_kern_sum-mingxu1067-GPU-Perf-Analyzer.csv";
  const fs::path timeline = shared / "cuda_gpu_trace-apexedgesystems-vernier.csv";
  if (!fs::exists(kernels) || !fs::exists(timeline))
    GTEST_SKIP() << "shared Nsight fixtures not found under " << shared;
  TempDir dir("cg-sql");
  fs::create_directory(dir / "nsys");
  fs::copy_file(kernels, dir / "nsys" / kernels.filename());
  fs::copy_file(timeline, dir / "nsys" / timeline.filename());
  const fs::path trace = fixture("spec_example.jsonl");
  const fs::path db = dir / "gpu.db";
  const auto e = run_cli({"export", trace.string(), "--format", "sqlite", "-o", db.string(),
                          "--nsight-dir", (dir / "nsys").string()});
  ASSERT_EQ(e.exit_code, 0) << describe(e);
  const auto i = run_cli({"import", trace.string(), "--nsight-dir", (dir / "nsys").string()});
  ASSERT_EQ(i.exit_code, 0) << describe(i);
  const json gpu = json::parse(i.out)["gpu"];
  ASSERT_EQ(gpu["status"], "available");
  EXPECT_EQ(shell_query(db, "SELECT gpu_status FROM runs")[0]["gpu_status"], "available");
  const json rows =
      shell_query(db, "SELECT name, total_ns, count FROM nsight_kernels ORDER BY row_index");
  ASSERT_EQ(rows.size(), gpu["kernels"].size());
  ASSERT_FALSE(rows.empty());
  for (std::size_t k = 0; k < rows.size(); ++k) {
    EXPECT_EQ(rows[k]["name"], gpu["kernels"][k]["name"]);
    EXPECT_EQ(rows[k]["total_ns"], gpu["kernels"][k]["total_ns"]);
    EXPECT_EQ(rows[k]["count"], gpu["kernels"][k]["count"]);
  }
  const json ops =
      shell_query(db, "SELECT COUNT(*) AS n FROM nsight_timeline WHERE section = 'gpu_timeline'");
  EXPECT_EQ(ops[0]["n"].get<std::size_t>(), gpu["gpu_timeline"].size());
}

}  // namespace
