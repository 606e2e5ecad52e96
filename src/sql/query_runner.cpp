#include "sql/query_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "candle_graph/error.hpp"
#include "output/json_text.hpp"

namespace candle_graph::sql {

namespace {

using Clock = std::chrono::steady_clock;

// What the authorizer refused, for a message better than SQLite's "not authorized".
struct Guard {
  std::string refused;
  Clock::time_point deadline;
  bool timed_out = false;
};

bool is_read_only_pragma(const char* name, const char* value) {
  if (!name) return false;
  // Pragmas whose argument names a table or index: reading the schema, never setting anything.
  static constexpr const char* kSchemaReaders[] = {"table_info",      "table_xinfo", "table_list",
                                                   "index_list",      "index_info",  "index_xinfo",
                                                   "foreign_key_list"};
  for (const char* p : kSchemaReaders)
    if (std::strcmp(name, p) == 0) return true;
  // The rest only when they are read (`PRAGMA x = v` and `PRAGMA x(v)` set something).
  static constexpr const char* kReaders[] = {
      "database_list",   "collation_list", "function_list",  "module_list", "pragma_list",
      "compile_options", "page_count",     "page_size",      "encoding",    "user_version",
      "schema_version",  "application_id", "freelist_count", "query_only",  "data_version"};
  if (value) return false;
  for (const char* p : kReaders)
    if (std::strcmp(name, p) == 0) return true;
  return false;
}

std::string describe(int action, const char* a, const char* b) {
  auto named = [](const char* verb, const char* what) {
    std::string s = verb;
    if (what) {
      s += ' ';
      output::append_json_string(s, what);
    }
    return s;
  };
  switch (action) {
    case SQLITE_INSERT:
      return named("INSERT into", a);
    case SQLITE_UPDATE:
      return named("UPDATE", a);
    case SQLITE_DELETE:
      return named("DELETE from", a);
    case SQLITE_ATTACH:
      return named("ATTACH", a);
    case SQLITE_DETACH:
      return named("DETACH", a);
    case SQLITE_PRAGMA:
      return named(b ? "set PRAGMA" : "PRAGMA", a);
    case SQLITE_TRANSACTION:
      return named("a transaction statement", a);
    case SQLITE_SAVEPOINT:
      return named("SAVEPOINT", b);
    case SQLITE_ALTER_TABLE:
      return named("ALTER TABLE", b);
    case SQLITE_ANALYZE:
      return "ANALYZE";
    case SQLITE_REINDEX:
      return "REINDEX";
    default:
      return "create, drop or change schema objects";
  }
}

int authorize(void* user, int action, const char* a, const char* b, const char*, const char*) {
  Guard& guard = *static_cast<Guard*>(user);
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_FUNCTION:
    case SQLITE_RECURSIVE:
      return SQLITE_OK;
    case SQLITE_PRAGMA:
      if (is_read_only_pragma(a, b)) return SQLITE_OK;
      break;
    case SQLITE_UPDATE:
      // SQLite checks these while it reads the schema for a table-valued function such as
      // pragma_table_info(); a user UPDATE of the schema table is refused by SQLite itself
      // (writable_schema is a PRAGMA this authorizer refuses), by stmt_readonly and query_only.
      if (a && (std::strcmp(a, "sqlite_master") == 0 || std::strcmp(a, "sqlite_temp_master") == 0))
        return SQLITE_OK;
      break;
    default:
      break;
  }
  if (guard.refused.empty()) guard.refused = describe(action, a, b);
  return SQLITE_DENY;
}

int check_deadline(void* user) {
  Guard& guard = *static_cast<Guard*>(user);
  if (Clock::now() < guard.deadline) return 0;
  guard.timed_out = true;
  return 1;
}

[[noreturn]] void sql_error(sqlite3* db, std::string_view prefix = "SQL error") {
  std::string message(prefix);
  const int offset = sqlite3_error_offset(db);
  if (offset >= 0) message += " at offset " + std::to_string(offset);
  message += ": ";
  message += sqlite3_errmsg(db);
  if (sqlite3_errcode(db) == SQLITE_TOOBIG)
    message += " (`sql` holds a value of at most " + std::to_string(kValueBytes >> 20) + " MiB)";
  throw Error(std::move(message));
}

[[noreturn]] void refuse(const std::string& what) {
  throw Error("refused: `sql` is read-only and this statement would " + what +
              "; use SELECT (or WITH ... SELECT) and the read-only PRAGMAs");
}

bool only_space_or_comments(sqlite3* db, const char* tail) {
  // Preparing what follows the first statement yields no statement when it is only whitespace
  // and comments (SQLite's own definition). The authorizer is still installed: nothing runs.
  sqlite3_stmt* next = nullptr;
  const int rc = sqlite3_prepare_v2(db, tail, -1, &next, nullptr);
  sqlite3_finalize(next);
  return rc == SQLITE_OK && next == nullptr;
}

// Removes the hooks when the statement is done, whatever happened.
struct Hooks {
  sqlite3* db;
  Hooks(sqlite3* d, Guard& guard) : db(d) {
    sqlite3_set_authorizer(db, &authorize, &guard);
    sqlite3_progress_handler(db, 10000, &check_deadline, &guard);
  }
  ~Hooks() {
    sqlite3_set_authorizer(db, nullptr, nullptr);
    sqlite3_progress_handler(db, 0, nullptr, nullptr);
  }
};

}  // namespace

void run_query(const sqlite::Connection& connection, std::string_view statement,
               const QueryOptions& options, ResultSink& sink) {
  sqlite3* db = connection.get();
  // query_only stays on for the connection's lifetime: the authorizer refuses writes with a clear
  // message, and this is the engine's own guarantee behind it.
  connection.exec("PRAGMA query_only = 1");
  // SQLite's own cap is 1 GB a value: `SELECT zeroblob(1e9)` took 14 GiB and 36 s to print
  // as JSON. No value the database holds comes near this one; a statement that builds a larger
  // one fails with SQLITE_TOOBIG, at once.
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, kValueBytes);
  Guard guard;
  // Capped at ten years so the deadline cannot overflow the clock's 64-bit nanoseconds.
  const auto timeout = std::chrono::duration<double>(std::min(options.timeout_seconds, 3.2e8));
  guard.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(timeout);
  Hooks hooks(db, guard);

  const std::string text(statement);
  sqlite3_stmt* raw = nullptr;
  const char* tail = nullptr;
  const int rc = sqlite3_prepare_v2(db, text.c_str(), static_cast<int>(text.size()), &raw, &tail);
  struct Finalize {
    sqlite3_stmt* s;
    ~Finalize() { sqlite3_finalize(s); }
  } finalize{raw};
  if (!guard.refused.empty()) refuse(guard.refused);
  if (rc != SQLITE_OK) sql_error(db);
  if (!raw) throw Error("SQL error: the statement is empty");
  if (tail && !only_space_or_comments(db, tail))
    throw Error("SQL error at offset " + std::to_string(tail - text.c_str()) +
                ": `sql` runs one statement; found more after the first");
  if (!sqlite3_stmt_readonly(raw)) refuse("write to the database");

  const int n = sqlite3_column_count(raw);
  std::vector<std::string> columns;
  for (int c = 0; c < n; ++c) {
    const char* name = sqlite3_column_name(raw, c);
    columns.emplace_back(name ? name : "");
  }
  sink.begin(columns);
  std::vector<Cell> cells(static_cast<std::size_t>(n));
  std::uint64_t total = 0, delivered = 0;
  for (;;) {
    const int step = sqlite3_step(raw);
    if (step == SQLITE_DONE) break;
    if (step != SQLITE_ROW) {
      if (guard.timed_out) {
        std::string seconds;
        output::append_f64(seconds, options.timeout_seconds);
        throw Error("query interrupted: it ran longer than the --timeout of " + seconds +
                    " s (rows so far: " + std::to_string(total) + ")");
      }
      sql_error(db);
    }
    ++total;
    if (options.limit && delivered >= *options.limit) continue;  // counted, not delivered
    for (int c = 0; c < n; ++c) {
      Cell& cell = cells[static_cast<std::size_t>(c)];
      switch (sqlite3_column_type(raw, c)) {
        case SQLITE_INTEGER:
          cell = {CellType::integer, sqlite3_column_int64(raw, c), 0, {}};
          break;
        case SQLITE_FLOAT:
          cell = {CellType::real, 0, sqlite3_column_double(raw, c), {}};
          break;
        case SQLITE_TEXT: {
          const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(raw, c));
          cell = {CellType::text,
                  0,
                  0,
                  {p ? p : "", static_cast<std::size_t>(sqlite3_column_bytes(raw, c))}};
          break;
        }
        case SQLITE_BLOB: {
          const auto* p = static_cast<const char*>(sqlite3_column_blob(raw, c));
          cell = {CellType::blob,
                  0,
                  0,
                  {p ? p : "", static_cast<std::size_t>(sqlite3_column_bytes(raw, c))}};
          break;
        }
        default:
          cell = {};
      }
    }
    sink.row(cells);
    ++delivered;
  }
  sink.end(delivered, total, delivered < total);
}

}  // namespace candle_graph::sql
