// `export --format sqlite` and `sql` as users meet them: real clients (Python's sqlite3 module),
// several runs in one database, hostile strings, refused writes, the timeout, --append and
// atomic outputs.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>

#include "sql/query_database.hpp"
#include "sql/sql_test_support.hpp"
#include "support/files.hpp"

namespace {

using cgcli::describe;
using cgcli::fixture;
using cgcli::read_file;
using cgcli::run_cli;
using cgcli::TempDir;
using cgsql::run_program;
using cgsql::shell_query;
using nlohmann::json;
namespace fs = std::filesystem;

cgcli::RunResult export_db(std::vector<std::string> traces, const fs::path& db,
                           bool append = false) {
  std::vector<std::string> args{"export"};
  args.insert(args.end(), traces.begin(), traces.end());
  args.insert(args.end(), {"--format", "sqlite", "-o", db.string()});
  if (append) args.push_back("--append");
  return run_cli(args);
}

fs::path synth(const TempDir& dir, int seed, int layers = 6) {
  const fs::path trace = dir / ("synth-" + std::to_string(seed) + ".jsonl");
  const auto r = run_cli({"synth", "--layers", std::to_string(layers), "--seed",
                          std::to_string(seed), "-o", trace.string()});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  return trace;
}

// Files in `dir` other than `keep` (a failed export must leave no temporary file behind).
std::vector<std::string> stray_files(const fs::path& dir, const std::vector<fs::path>& keep) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (std::find(keep.begin(), keep.end(), e.path()) == keep.end())
      out.push_back(e.path().filename().string());
  return out;
}

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

TEST(SqlCommand, PythonSqlite3ModuleReadsTheDatabase) {
  CG_SQL_SKIP_WHEN_SANITIZED();
  if (!cgsql::have("/usr/bin/python3")) GTEST_SKIP() << "/usr/bin/python3 is not installed";
  TempDir dir("cg-sql");
  const fs::path db = dir / "runs.db";
  ASSERT_EQ(export_db({fixture("spec_example.jsonl").string()}, db).exit_code, 0);
  // Python's own sqlite3 module: the schema row, every table's row count, the views.
  const auto r = cgsql::run_program(
      {"/usr/bin/python3", "-c",
       "import json, sqlite3, sys\n"
       "c = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)\n"
       "names = [n for (n,) in c.execute(\"SELECT name FROM sqlite_schema WHERE type IN "
       "('table','view') ORDER BY name\")]\n"
       "out = {n: c.execute('SELECT COUNT(*) FROM \"%s\"' % n).fetchone()[0] for n in names}\n"
       "out['schema_name'] = c.execute('SELECT name FROM schema').fetchone()[0]\n"
       "out['integrity'] = c.execute('PRAGMA integrity_check').fetchone()[0]\n"
       "print(json.dumps(out))\n",
       db.string()});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const json got = json::parse(r.out);
  EXPECT_EQ(got["schema_name"], "candle-graph/sql/1");
  EXPECT_EQ(got["integrity"], "ok");
  // Counts from the fixture itself (tests/fixtures/spec_example.jsonl): 5 spans, 2 ops (with 4
  // inputs), 1 tensor, 4 memory events, 1 device sample, 1 gradient, 2 op names.
  EXPECT_EQ(got["runs"], 1);
  EXPECT_EQ(got["spans"], 5);
  EXPECT_EQ(got["ops"], 2);
  EXPECT_EQ(got["op_inputs"], 4);
  EXPECT_EQ(got["tensors"], 1);
  EXPECT_EQ(got["memory_events"], 4);
  EXPECT_EQ(got["device_memory"], 1);
  EXPECT_EQ(got["gradients"], 1);
  EXPECT_EQ(got["op_stats"], 2);
  EXPECT_EQ(got["span_costs"], 5);
  for (const char* view : {"op_stats", "span_costs", "live_at_peak", "nsight_kernels"})
    EXPECT_TRUE(got.contains(view)) << view;
}

TEST(SqlCommand, TwoRunsComparedInOneQuery) {
  CG_SQL_SKIP_WHEN_SANITIZED();
  TempDir dir("cg-sql");
  const fs::path a = synth(dir, 1, 5), b = synth(dir, 2, 9);
  const fs::path db = dir / "runs.db";
  ASSERT_EQ(export_db({a.string(), b.string()}, db).exit_code, 0);
  // Expected: per op name, the total duration of each run, summed here from each trace's own
  // import JSON (graph/3 op nodes).
  auto totals = [](const fs::path& trace) {
    const auto r = run_cli({"import", trace.string()});
    std::map<std::string, std::uint64_t> t;
    const json packet = json::parse(r.out);
    for (const json& n : packet["graph"]["spans"])
      if (n.contains("storage_bytes")) t[n["name"]] += n["total_time_ns"].get<std::uint64_t>();
    return t;
  };
  const auto ta = totals(a), tb = totals(b);
  const json rows = cgsql::cg_sql(
      {db.string(),
       "SELECT x.name, x.total_ns AS a_ns, y.total_ns AS b_ns, y.total_ns - x.total_ns AS delta "
       "FROM op_stats x JOIN op_stats y ON x.name = y.name "
       "WHERE x.run_id = 'run-synth-1' AND y.run_id = 'run-synth-2' ORDER BY x.name",
       "--limit", "0"})["rows"];
  ASSERT_EQ(rows.size(), ta.size());
  for (const json& row : rows) {
    const std::string name = row[0];
    EXPECT_EQ(row[1].get<std::uint64_t>(), ta.at(name)) << name;
    EXPECT_EQ(row[2].get<std::uint64_t>(), tb.at(name)) << name;
    EXPECT_EQ(row[3].get<std::int64_t>(), static_cast<std::int64_t>(tb.at(name) - ta.at(name)));
  }
  // The same comparison with the two traces as sources (in-memory database).
  const json direct = cgsql::cg_sql({a.string(), b.string(), "SELECT COUNT(*) FROM runs"});
  EXPECT_EQ(direct["rows"][0][0], 2);
  // A database and a trace together; the same run twice is refused, naming it.
  EXPECT_EQ(cgsql::cg_sql({db.string(), fixture("spec_example.jsonl").string(),
                           "SELECT COUNT(*) FROM runs"})["rows"][0][0],
            3);
  const auto dup = run_cli({"sql", db.string(), a.string(), "SELECT 1"});
  EXPECT_EQ(dup.exit_code, 1) << describe(dup);
  EXPECT_NE(dup.err.find("run-synth-1"), std::string::npos) << dup.err;
}

TEST(SqlCommand, HostileStringsRoundTrip) {
  TempDir dir("cg-sql");
  const std::string long_name =
      "it's \"quoted\", a,b;c\n\t\x01\x1f\x7f -- ü€𝄞 " + std::string(100 * 1024, 'x') + "'); DROP";
  const std::string op_name = "op \"q\", 'a'\r\nnext";
  const std::string run_id = "run 'x' \"y\"\x01";
  std::string text = read_file(fixture("spec_example.jsonl"));
  text = replace_all(text, "\"demo/update-000000000001/forward\"", json(long_name).dump());
  text = replace_all(text, "\"matmul\"", json(op_name).dump());
  text = replace_all(text, "\"run-4242-1786000000000000000\"", json(run_id).dump());
  const fs::path trace = dir.write("hostile.jsonl", text);
  const fs::path db = dir / "runs.db";
  const auto e = export_db({trace.string()}, db);
  ASSERT_EQ(e.exit_code, 0) << describe(e);

  // Read back by a real client (the shell's JSON mode escapes everything).
  const json shell = shell_query(db, "SELECT name FROM spans WHERE step = 'forward'");
  ASSERT_EQ(shell.size(), 1u);
  EXPECT_EQ(shell[0]["name"].get<std::string>(), long_name);
  EXPECT_EQ(shell_query(db, "SELECT run_id FROM runs")[0]["run_id"].get<std::string>(), run_id);
  EXPECT_EQ(shell_query(
                db, "SELECT name FROM op_stats WHERE calls = 1 AND output_bytes = 2048")[0]["name"]
                .get<std::string>(),
            op_name);
  // Through `sql`, JSON: bound parameters are not needed; the strings are data, never SQL.
  const json viaj = cgsql::cg_sql({db.string(),
                                   "SELECT name, length(name) FROM spans WHERE "
                                   "step = 'forward'"});
  EXPECT_EQ(viaj["rows"][0][0].get<std::string>(), long_name);
  // CSV (RFC 4180), parsed back by Python's csv module.
  if (cgsql::have("/usr/bin/python3")) {
    const auto csv =
        run_cli({"sql", db.string(), "SELECT op_name, run_id FROM ops ORDER BY op_index",
                 "--format", "csv"});
    ASSERT_EQ(csv.exit_code, 0) << describe(csv);
    const fs::path csv_file = dir.write("out.csv", csv.out);
    const auto parsed = cgsql::run_program(
        {"/usr/bin/python3", "-c",
         "import csv, json, sys\n"
         "rows = list(csv.reader(open(sys.argv[1], newline='', encoding='utf-8'), strict=True))\n"
         "print(json.dumps(rows))\n",
         csv_file.string()});
    ASSERT_EQ(parsed.exit_code, 0) << describe(parsed);
    const json rows = json::parse(parsed.out);
    ASSERT_EQ(rows.size(), 3u);  // header + 2 ops
    EXPECT_EQ(rows[0], json::array({"op_name", "run_id"}));
    EXPECT_EQ(rows[1][0].get<std::string>(), op_name);
    EXPECT_EQ(rows[1][1].get<std::string>(), run_id);
    EXPECT_EQ(rows[2][0].get<std::string>(), "sgd_update");
  }
  // The table format keeps every row on one line: control characters are shown escaped.
  const auto table = run_cli({"sql", db.string(), "SELECT op_name FROM ops", "--format", "table"});
  ASSERT_EQ(table.exit_code, 0) << describe(table);
  EXPECT_NE(table.out.find("op \"q\", 'a'\\r\\nnext"), std::string::npos) << table.out;
}

TEST(SqlCommand, WritingStatementsAreRefused) {
  TempDir dir("cg-sql");
  const fs::path db = dir / "runs.db";
  ASSERT_EQ(export_db({fixture("spec_example.jsonl").string()}, db).exit_code, 0);
  const std::string before = read_file(db);
  for (const std::string& sql : std::vector<std::string>{
           "DELETE FROM runs", "INSERT INTO findings VALUES ('r', 9, 'x')",
           "UPDATE spans SET name = 'x'", "DROP TABLE ops", "CREATE TABLE t (x)",
           "ATTACH DATABASE '" + (dir / "other.db").string() + "' AS o", "PRAGMA query_only = 0",
           "PRAGMA journal_mode = WAL", "VACUUM", "SELECT 1; DELETE FROM runs", "BEGIN",
           "REINDEX"}) {
    SCOPED_TRACE(sql);
    // From a database file (opened read-only), and for three statements also from a trace (an
    // in-memory database, where only the guard stops writes): the guard does not depend on the
    // source, so the other statements skip the slower trace load.
    std::vector<fs::path> sources{db};
    const bool also_trace = sql.rfind("DELETE", 0) == 0 || sql.rfind("ATTACH", 0) == 0 ||
                            sql.rfind("PRAGMA query_only", 0) == 0;
    if (also_trace && !cgsql::kSanitized) sources.push_back(fixture("spec_example.jsonl"));
    for (const fs::path& source : sources) {
      const auto r = run_cli({"sql", source.string(), sql});
      EXPECT_EQ(r.exit_code, 1) << describe(r);
      EXPECT_TRUE(r.out.empty()) << r.out;
      EXPECT_TRUE(r.err.find("refused") != std::string::npos ||
                  r.err.find("one statement") != std::string::npos)
          << r.err;
    }
  }
  EXPECT_EQ(read_file(db), before);
  EXPECT_FALSE(fs::exists(dir / "other.db"));
  // Read-only statements stay allowed, including the schema PRAGMAs.
  EXPECT_EQ(
      cgsql::cg_sql({db.string(), "PRAGMA table_info(runs)"})["returned_rows"].get<int>() > 30,
      true);
  // A SQL error carries SQLite's message and the offset.
  const auto bad = run_cli({"sql", db.string(), "SELECT nope FROM runs"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("no such column: nope"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("offset 7"), std::string::npos) << bad.err;
}

TEST(SqlCommand, SlowStatementIsInterruptedByTimeout) {
  TempDir dir("cg-sql");
  const fs::path db = dir / "runs.db";
  ASSERT_EQ(export_db({fixture("spec_example.jsonl").string()}, db).exit_code, 0);
  const auto start = std::chrono::steady_clock::now();
  // An endless recursive CTE: only the timeout ends it.
  const auto r = run_cli({"sql", db.string(),
                          "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                          "SELECT max(x) FROM c",
                          "--timeout", "0.3"});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.err.find("interrupted"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
  EXPECT_LT(seconds, 20.0);  // generous on a loaded machine; without the timeout it never ends
}

TEST(SqlCommand, JsonIsBoundedWithTotalAndTruncated) {
  TempDir dir("cg-sql");
  const fs::path db = dir / "runs.db";
  ASSERT_EQ(export_db({fixture("spec_example.jsonl").string()}, db).exit_code, 0);
  const std::string rows150 =
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 150) "
      "SELECT x, x * 0.5 AS half, NULL AS none_, x'00ff' AS blob FROM c";
  const json def = cgsql::cg_sql({db.string(), rows150});
  EXPECT_EQ(def["schema"], "candle-graph/sql-result/1");
  EXPECT_EQ(def["columns"], json::array({"x", "half", "none_", "blob"}));
  EXPECT_EQ(def["rows"].size(), 100u);  // the default limit
  EXPECT_EQ(def["returned_rows"], 100);
  EXPECT_EQ(def["total_rows"], 150);
  EXPECT_EQ(def["truncated"], true);
  EXPECT_EQ(def["rows"][99], json::array({100, 50.0, nullptr, {{"hex", "00ff"}}}));
  const json all = cgsql::cg_sql({db.string(), rows150, "--limit", "0"});
  EXPECT_EQ(all["rows"].size(), 150u);
  EXPECT_EQ(all["truncated"], false);
  const json few = cgsql::cg_sql({db.string(), rows150, "--limit", "7"});
  EXPECT_EQ(few["returned_rows"], 7);
  EXPECT_EQ(few["total_rows"], 150);
}

// A value is capped at 64 MiB (docs/sql.md): a statement that builds a larger one fails at once
// with SQLite's "string or blob too big", instead of building it (SQLite's own cap is 1 GB;
// `SELECT zeroblob(1e9)` took 14 GiB to print as JSON), and one just below the cap still works.
TEST(SqlCommand, AValueOverSixtyFourMebibytesIsRefused) {
  TempDir dir("cg-sql");
  const fs::path db = dir / "runs.db";
  ASSERT_EQ(export_db({fixture("spec_example.jsonl").string()}, db).exit_code, 0);
  for (const std::string& statement :
       {std::string("SELECT zeroblob(1000000000)"), std::string("SELECT randomblob(67108865)"),
        std::string("SELECT length(hex(zeroblob(40000000)))")}) {
    SCOPED_TRACE(statement);
    const auto r = run_cli({"sql", db.string(), statement});
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_NE(r.err.find("string or blob too big"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("64 MiB"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
  // 64 MiB exactly: the largest value allowed.
  const json at_cap = cgsql::cg_sql({db.string(), "SELECT length(zeroblob(67108864)) AS n"});
  EXPECT_EQ(at_cap["rows"][0][0], 67108864);
}

// A file named like a database that lacks SQLite's header is read as a trace, whose error then
// says that too; the same bytes named .jsonl get the trace's error alone.
TEST(SqlCommand, AFileNamedLikeADatabaseThatIsNotOneSaysSo) {
  TempDir dir("cg-sql");
  std::string bytes(4096, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(0x80 + i % 64);
  for (const char* name : {"random.db", "random.sqlite", "random.jsonl"}) {
    SCOPED_TRACE(name);
    const fs::path file = dir / name;
    ASSERT_TRUE(candle_graph::testing::write_file(file, bytes));
    const auto r = run_cli({"sql", file.string(), "SELECT 1"});
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_NE(r.err.find(file.string()), std::string::npos) << r.err;
    const bool named_as_database = fs::path(name).extension() != ".jsonl";
    EXPECT_EQ(r.err.find("does not start with an SQLite database's header") != std::string::npos,
              named_as_database)
        << r.err;
    EXPECT_TRUE(r.out.empty());
  }
}

TEST(SqlCommand, AppendAddsRunsAndRefusesADuplicateRunId) {
  TempDir dir("cg-sql");
  const fs::path db = dir / "runs.db";
  const fs::path one = fixture("spec_example.jsonl"), two = fixture("inference_all_fields.jsonl");
  ASSERT_EQ(export_db({one.string()}, db).exit_code, 0);
  const std::string before = read_file(db);

  // Without --append an existing database is not replaced (usage error).
  const auto again = export_db({two.string()}, db);
  EXPECT_EQ(again.exit_code, 2) << describe(again);
  EXPECT_NE(again.err.find("--append"), std::string::npos);
  EXPECT_EQ(read_file(db), before);

  // A run already present is refused, naming it; the database is unchanged.
  const auto dup = export_db({two.string(), one.string()}, db, true);
  EXPECT_EQ(dup.exit_code, 1) << describe(dup);
  EXPECT_NE(dup.err.find("run-4242-1786000000000000000"), std::string::npos) << dup.err;
  EXPECT_EQ(read_file(db), before);
  EXPECT_EQ(stray_files(dir.path(), {db}), std::vector<std::string>{});

  const auto ok = export_db({two.string()}, db, true);
  ASSERT_EQ(ok.exit_code, 0) << describe(ok);
  const json runs = shell_query(db, "SELECT run_id FROM runs ORDER BY run_id");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0]["run_id"], "run-4242-1786000000000000000");
  EXPECT_EQ(runs[1]["run_id"], "run-7-1786000000000000001");
  // Two database files as `sql` sources are merged; the same runs twice are refused by name.
  const fs::path copy = dir / "copy.db";
  fs::copy_file(db, copy);
  const auto both = run_cli({"sql", db.string(), copy.string(), "SELECT COUNT(*) FROM runs"});
  EXPECT_EQ(both.exit_code, 1) << describe(both);
  EXPECT_NE(both.err.find("run-4242-1786000000000000000"), std::string::npos) << both.err;
  EXPECT_NE(both.err.find("copy.db"), std::string::npos) << both.err;
  const fs::path third = dir / "third.db";
  ASSERT_EQ(export_db({fixture("evidence/edge_cases.jsonl").string()}, third).exit_code, 0);
  EXPECT_EQ(cgsql::cg_sql({db.string(), third.string(), "SELECT COUNT(*) FROM runs"})["rows"][0][0],
            3);
  fs::remove(copy);
  fs::remove(third);
  // Two traces with the same run id in one export: refused too.
  const auto twice = export_db({one.string(), one.string()}, dir / "twice.db");
  EXPECT_EQ(twice.exit_code, 1);
  EXPECT_FALSE(fs::exists(dir / "twice.db"));
}

// --append through a link adds the runs to the database the link names, which the sqlite3 shell
// then reads with both runs; the link stays a link. Renamed over, the link would become a new
// database and the one it named would keep its single run.
TEST(SqlCommand, AppendThroughALinkAddsToTheDatabaseItNames) {
  TempDir dir("cg-sql");
  fs::create_directories(dir / "store");
  const fs::path db = dir / "store" / "runs.db", link = dir / "latest.db";
  ASSERT_EQ(export_db({fixture("spec_example.jsonl").string()}, db).exit_code, 0);
  fs::create_symlink("store/runs.db", link);
  const auto ok = export_db({fixture("inference_all_fields.jsonl").string()}, link, true);
  ASSERT_EQ(ok.exit_code, 0) << describe(ok);
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_EQ(shell_query(db, "SELECT COUNT(*) AS n FROM runs")[0]["n"], 2);
  EXPECT_EQ(stray_files(dir.path(), {link, dir / "store"}), std::vector<std::string>{});
  EXPECT_EQ(stray_files(dir / "store", {db}), std::vector<std::string>{});
}

// --append replaces the database with a copy that has the new runs: the copy keeps the database's
// permission bits (here private, and here wider than this process's umask would give a new file),
// as `stat` reports them after each export.
TEST(SqlCommand, AppendKeepsTheDatabasesPermissionBits) {
  TempDir dir("cg-sql");
  const fs::path db = dir / "runs.db";
  ASSERT_EQ(export_db({fixture("spec_example.jsonl").string()}, db).exit_code, 0);
  fs::permissions(db, fs::perms::owner_read | fs::perms::owner_write);
  const auto ok = export_db({fixture("inference_all_fields.jsonl").string()}, db, true);
  ASSERT_EQ(ok.exit_code, 0) << describe(ok);
  EXPECT_EQ(fs::status(db).permissions(), fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(shell_query(db, "SELECT COUNT(*) AS n FROM runs")[0]["n"], 2);
  fs::permissions(db, fs::perms::all & ~fs::perms::others_exec);
  ASSERT_EQ(export_db({fixture("evidence/edge_cases.jsonl").string()}, db, true).exit_code, 0);
  EXPECT_EQ(fs::status(db).permissions(), fs::perms::all & ~fs::perms::others_exec);
  EXPECT_EQ(shell_query(db, "SELECT COUNT(*) AS n FROM runs")[0]["n"], 3);
  // As root (only root may give a file away), another user's database stays theirs.
  if (::geteuid() != 0) return;
  constexpr uid_t kNobody = 65534;
  ASSERT_EQ(::chown(db.c_str(), kNobody, kNobody), 0);
  ASSERT_EQ(export_db({synth(dir, 3).string()}, db, true).exit_code, 0);
  struct stat st {};
  ASSERT_EQ(::stat(db.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, kNobody);
  EXPECT_EQ(st.st_gid, kNobody);
  EXPECT_EQ(shell_query(db, "SELECT COUNT(*) AS n FROM runs")[0]["n"], 4);
}

// Page sizes, read back by Debian's sqlite3 shell and through the connection itself: a new
// database file has 16 KiB pages and `sql` builds its in-memory database from traces with 64 KiB
// pages. --append adds to a database with SQLite's default 4 KiB pages (one the original wrote,
// here made by the shell's VACUUM INTO), which keeps its page size and stays intact.
TEST(SqlCommand, PageSizesOfNewDatabasesAndAppendKeepsAnExistingOne) {
  TempDir dir("cg-sql");
  const fs::path db = dir / "runs.db", small_pages = dir / "small-pages.db";
  ASSERT_EQ(export_db({fixture("spec_example.jsonl").string()}, db).exit_code, 0);
  EXPECT_EQ(shell_query(db, "PRAGMA page_size")[0]["page_size"], 16384);

  const cgcli::RunResult vacuum =
      run_program({"/usr/bin/sqlite3", db.string(),
                   "PRAGMA page_size = 4096; VACUUM INTO '" + small_pages.string() + "'"});
  ASSERT_EQ(vacuum.exit_code, 0) << describe(vacuum);
  ASSERT_EQ(shell_query(small_pages, "PRAGMA page_size")[0]["page_size"], 4096);
  const auto appended =
      export_db({fixture("inference_all_fields.jsonl").string()}, small_pages, true);
  ASSERT_EQ(appended.exit_code, 0) << describe(appended);
  EXPECT_EQ(shell_query(small_pages, "PRAGMA page_size")[0]["page_size"], 4096);
  EXPECT_EQ(shell_query(small_pages, "PRAGMA integrity_check")[0]["integrity_check"], "ok");
  EXPECT_EQ(shell_query(small_pages, "SELECT COUNT(*) AS n FROM runs")[0]["n"], 2);

  const auto memory = candle_graph::sql::QueryDatabase::in_memory();
  candle_graph::sqlite::Statement page_size(memory.connection(), "PRAGMA page_size");
  ASSERT_TRUE(page_size.step());
  EXPECT_EQ(sqlite3_column_int64(page_size.get(), 0), 65536);
}

// The documented join keys (docs/sql.md, "Indices") as SQLite's planner sees them, asked through
// Debian's sqlite3 shell: every lookup by a key, with the run or without it, searches an index
// instead of scanning the table, and a run's rows alone are found through the table's key.
TEST(SqlCommand, JoinKeysAreSearchedThroughIndicesWithOrWithoutTheRun) {
  if (!cgsql::have("/usr/bin/sqlite3")) GTEST_SKIP() << "no /usr/bin/sqlite3";
  TempDir dir("cg-sql");
  const fs::path db = dir / "runs.db";
  ASSERT_EQ(export_db({synth(dir, 3).string()}, db).exit_code, 0);
  const std::vector<std::pair<std::string, std::string>> lookups = {
      {"spans WHERE span_id = 'x'", "spans_by_id"},
      {"spans WHERE parent_index = 1 AND run_id = 'r'", "spans_by_parent"},
      {"ops WHERE span_index = 1", "ops_by_span"},
      {"ops WHERE op_name = 'aten::mm' AND run_id = 'r'", "ops_by_name"},
      {"ops WHERE node_id = 't1'", "ops_by_node"},
      {"ops WHERE correlation = 7 AND run_id = 'r'", "ops_by_correlation"},
      {"kernels WHERE correlation = 7", "kernels_by_correlation"},
      {"kernels WHERE launch_op_index = 3 AND run_id = 'r'", "kernels_by_launcher"},
      {"kernels WHERE span_index = 3", "kernels_by_span"},
      {"op_inputs WHERE op_index = 3 AND run_id = 'r'", "op_inputs_by_op"},
      {"op_inputs WHERE tensor_id = 'x'", "op_inputs_by_tensor"},
      {"tensors WHERE tensor_id = 'x' AND run_id = 'r'", "tensors_by_id"},
      {"memory_events WHERE tensor_id = 'x'", "memory_events_by_tensor"},
      {"memory_events WHERE span_index = 2 AND run_id = 'r'", "memory_events_by_span"},
      {"edges WHERE from_id = 'x'", "edges_by_from"},
      {"edges WHERE to_id = 'x' AND run_id = 'r'", "edges_by_to"},
      {"gradients WHERE root = 'loss' AND key = 'w'", "gradients_by_key"},
      {"spans WHERE run_id = 'r'", "spans_key"},
      {"ops WHERE run_id = 'r' ORDER BY op_index", "ops_key"},
      {"tensors WHERE run_id = 'r'", "tensors_key"},
      {"memory_events WHERE run_id = 'r'", "memory_events_key"},
      {"kernels WHERE run_id = 'r'", "kernels_key"},
  };
  for (const auto& [from_where, index] : lookups) {
    // The shell prints a plan as a tree ("QUERY PLAN", then "`--SEARCH ..."), in any mode.
    const auto r = cgcli::run_program({"/usr/bin/sqlite3", "-readonly", db.string(),
                                       "EXPLAIN QUERY PLAN SELECT * FROM " + from_where});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(r.out.rfind("QUERY PLAN\n`--SEARCH ", 0), 0u) << from_where << ": " << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2) << from_where << ": " << r.out;
    EXPECT_NE(r.out.find(" INDEX " + index + " ("), std::string::npos)
        << from_where << ": " << r.out;
  }
}

TEST(SqlCommand, FailedExportLeavesNoFile) {
  TempDir dir("cg-sql");
  const fs::path db = dir / "runs.db";
  // The second trace is untrusted (an open root span): nothing may be written.
  const auto r = export_db(
      {fixture("spec_example.jsonl").string(), fixture("untrusted_open_root.jsonl").string()}, db);
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.err.find("untrusted_open_root.jsonl"), std::string::npos) << r.err;
  EXPECT_EQ(stray_files(dir.path(), {}), std::vector<std::string>{});
  // A malformed trace: the same.
  const fs::path bad = dir.write("bad.jsonl", "{\"kind\":\"meta\"}\n");
  const auto m = export_db({bad.string()}, db);
  EXPECT_EQ(m.exit_code, 1) << describe(m);
  EXPECT_EQ(stray_files(dir.path(), {bad}), std::vector<std::string>{});
  // An input is never overwritten.
  const auto over = export_db({bad.string()}, bad);
  EXPECT_EQ(over.exit_code, 2);
  // --append onto a file that is not a candle-graph database: refused, file unchanged.
  const fs::path other = dir.write("other.db", "not a database at all");
  const auto app = export_db({fixture("spec_example.jsonl").string()}, other, true);
  EXPECT_EQ(app.exit_code, 1) << describe(app);
  EXPECT_EQ(read_file(other), "not a database at all");
  EXPECT_EQ(stray_files(dir.path(), {bad, other}), std::vector<std::string>{});
}

}  // namespace
