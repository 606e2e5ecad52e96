// `candle-graph sql SOURCE... "SELECT ..." [--format json|csv|table] [--limit N] [--timeout S]`:
// one read-only SQL statement over traces and candle-graph/sql/1 databases (src/sql).
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "candle_graph/error.hpp"
#include "cli/analysis_support.hpp"
#include "cli/command.hpp"
#include "cli/standard_output.hpp"
#include "sql/query_database.hpp"
#include "sql/query_runner.hpp"
#include "sql/result_format.hpp"

namespace candle_graph::cli {

namespace {

constexpr std::uint64_t kSqlDefaultJsonLimit = 100;

// A file named like a database that is not one is read as a trace, whose error ("invalid UTF-8
// in the line") alone would not say that the database was never recognised.
TraceDocument load_trace_source(const std::filesystem::path& source, std::string_view step) {
  try {
    return load_trace(source, step);
  } catch (const Error& e) {
    const std::string ext = source.extension().string();
    if (ext != ".db" && ext != ".sqlite" && ext != ".sqlite3" && ext != ".db3") throw;
    throw Error(e.kind(), e.path(), e.line(),
                e.message() +
                    " (read as a trace: the file does not start with an SQLite database's header)");
  }
}

sql::QueryDatabase open_sql_sources(const std::vector<std::filesystem::path>& sources,
                                    std::string_view step) {
  if (sources.size() == 1 && sql::is_sqlite_file(sources[0]))
    return sql::QueryDatabase::open_file(sources[0]);
  sql::QueryDatabase db = sql::QueryDatabase::in_memory();
  std::uint64_t input_bytes = 0;
  for (const auto& source : sources) {
    if (sql::is_sqlite_file(source)) {
      db.add_database(source);
      continue;
    }
    const TraceDocument doc = load_trace_source(source, step);
    const std::uint64_t bytes = trace_bytes(source);
    input_bytes += bytes;
    try {
      db.add_run(
          doc, source.string(), [&] { return build_evidence(doc, nullptr, std::nullopt); },
          database_progress("loading " + source.string() + " for the query (", bytes));
    } catch (const Error& e) {
      if (e.path().empty() || e.path() == ":memory:") throw Error(source.string(), 0, e.message());
      throw;
    }
  }
  db.finish_loading(database_progress("preparing the query's database (", input_bytes));
  return db;
}

}  // namespace

Runner register_sql(CLI::App& app) {
  struct Args {
    std::vector<std::string> positional;
    std::string format = "json";
    std::optional<std::int64_t> limit;
    double timeout = 30;
    std::string step;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "sql",
      "Run one read-only SQL statement (SQLite) over traces and databases.\n"
      "A SOURCE is a trace of any format `import` reads (trace/6, a PyTorch profiler trace,\n"
      "our Chrome export; analysed and loaded into an in-memory database) or a\n"
      "database written by `export --format sqlite` (opened read-only). Many sources are\n"
      "merged into one database, one run_id each. Tables and views (runs, spans, ops,\n"
      "op_stats, span_costs, live_at_peak, ...) are described in docs/sql.md.\n"
      "Output: json (candle-graph/sql-result/1; at most --limit rows, default 100, with\n"
      "total_rows and truncated), csv (RFC 4180) or table (aligned, for humans).\n"
      "Statements that would write are refused; --timeout interrupts long queries.\n"
      "Exit: 0 ok, 1 SQL error, refused or interrupted statement, unreadable source, 2 usage.\n"
      "Examples: candle-graph sql run/trace.jsonl \"SELECT * FROM op_stats ORDER BY total_ns "
      "DESC\"\n"
      "          candle-graph sql runs.db \"SELECT run_id, peak_bytes FROM runs\" --format table");
  cmd->add_option("SOURCE... STATEMENT", args->positional,
                  "one or more traces or databases, then the SQL statement")
      ->required()
      ->expected(2, CLI::detail::expected_max_vector_size);
  add_step_option(cmd, args->step);
  add_threads_option(cmd);
  cmd->add_option("--format", args->format, "json, csv or table")
      ->check(CLI::IsMember({"json", "csv", "table"}));
  cmd->add_option("--limit", args->limit,
                  "at most N rows (0: all); default 100 for json, all for csv and table")
      ->check(CLI::Validator(
          [](std::string& v) { return !v.empty() && v[0] == '-' ? "must be 0 or more" : ""; },
          "N>=0"));
  cmd->add_option("--timeout", args->timeout, "interrupt the statement after S seconds")
      ->default_val(30)
      ->check(CLI::Range(0.001, 1e9));
  return [args] {
    std::vector<std::filesystem::path> sources(args->positional.begin(),
                                               args->positional.end() - 1);
    const std::string& statement = args->positional.back();
    std::optional<std::uint64_t> limit;
    if (args->limit)
      limit = static_cast<std::uint64_t>(*args->limit);
    else if (args->format == "json")
      limit = kSqlDefaultJsonLimit;
    if (limit && *limit == 0) limit.reset();

    sql::QueryDatabase db = open_sql_sources(sources, args->step);
    // JSON is bounded, so it is built in memory and written only when the statement succeeded:
    // an error never leaves half a document on stdout. CSV and tables of any size stream.
    std::string json;
    std::unique_ptr<sql::ResultSink> sink;
    if (args->format == "json")
      sink = sql::json_result([&](std::string_view piece) { json += piece; }, limit);
    else if (args->format == "csv")
      sink = sql::csv_result(&write_stdout);
    else
      sink = sql::table_result(&write_stdout);

    struct Counts : sql::ResultSink {
      sql::ResultSink* inner;
      std::uint64_t delivered = 0, total = 0;
      explicit Counts(sql::ResultSink* s) : inner(s) {}
      void begin(std::span<const std::string> c) override { inner->begin(c); }
      void row(std::span<const sql::Cell> c) override { inner->row(c); }
      void end(std::uint64_t d, std::uint64_t t, bool tr) override {
        delivered = d;
        total = t;
        inner->end(d, t, tr);
      }
    } counts(sink.get());
    sql::run_query(db.connection(), statement,
                   sql::QueryOptions{.limit = limit, .timeout_seconds = args->timeout}, counts);
    if (!json.empty()) write_stdout(json);
    flush_stdout();
    if (args->format != "json" && counts.delivered < counts.total)
      std::fprintf(stderr, "showing %llu of %llu rows (--limit)\n",
                   static_cast<unsigned long long>(counts.delivered),
                   static_cast<unsigned long long>(counts.total));
    return static_cast<int>(kExitOk);
  };
}

}  // namespace candle_graph::cli
