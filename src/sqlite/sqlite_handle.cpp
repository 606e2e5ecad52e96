#include "sqlite/sqlite_handle.hpp"

#include <cstdint>
#include <limits>

#include "candle_graph/error.hpp"
#include "sqlite/sorter_memory.hpp"
#include "sqlite/write_behind_vfs.hpp"

namespace candle_graph::sqlite {

void fail(sqlite3* db, const std::string& path, std::string_view what) {
  std::string message(what);
  message += ": ";
  message += db ? sqlite3_errmsg(db) : "out of memory";
  throw Error(path, 0, std::move(message));
}

Connection::Connection(const std::string& path, int flags, PageWrites writes) : path_(path) {
  install_sorter_memory();  // before SQLite's first use; SQLite's own allocator if refused
  const char* vfs = writes == PageWrites::behind ? write_behind_vfs() : nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db_, flags, vfs);
  if (rc != SQLITE_OK) {
    std::string message = "cannot open the database: ";
    message += db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error(path, 0, std::move(message));
  }
  sqlite3_extended_result_codes(db_, 1);
}

Connection::~Connection() {
  sqlite3_close_v2(db_);
}

void Connection::exec(const std::string& sql) const {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string message = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    throw Error(path_, 0, std::move(message));
  }
}

void Connection::close() {
  if (!db_) return;
  if (sqlite3_close(db_) != SQLITE_OK) fail(db_, path_, "cannot close the database");
  db_ = nullptr;
}

Statement::Statement(const Connection& db, std::string_view sql) : db_(&db) {
  if (sqlite3_prepare_v3(db.get(), sql.data(), static_cast<int>(sql.size()),
                         SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr) != SQLITE_OK)
    fail(db.get(), db.path(), "cannot prepare a statement");
}

Statement::~Statement() {
  sqlite3_finalize(stmt_);
}

namespace {
void check_bind(int rc, const Connection& db) {
  if (rc != SQLITE_OK) fail(db.get(), db.path(), "cannot bind a value");
}
}  // namespace

void Statement::bind_null(int i) {
  check_bind(sqlite3_bind_null(stmt_, i), *db_);
}

void Statement::bind_text(int i, std::string_view s, bool stable) {
  // A zero-length view may have a null data pointer, which SQLite would store as NULL.
  const char* data = s.data() ? s.data() : "";
  check_bind(sqlite3_bind_text64(stmt_, i, data, s.size(),
                                 stable ? SQLITE_STATIC : SQLITE_TRANSIENT, SQLITE_UTF8),
             *db_);
}

void Statement::bind_text(int i, const std::optional<std::string_view>& s) {
  if (s)
    bind_text(i, *s);
  else
    bind_null(i);
}

void Statement::bind_i64(int i, std::int64_t v) {
  check_bind(sqlite3_bind_int64(stmt_, i, v), *db_);
}

void Statement::bind_u64(int i, std::uint64_t v) {
  if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    bind_f64(i, static_cast<double>(v));
  else
    bind_i64(i, static_cast<std::int64_t>(v));
}

void Statement::bind_u64(int i, const std::optional<std::uint64_t>& v) {
  if (v)
    bind_u64(i, *v);
  else
    bind_null(i);
}

void Statement::bind_f64(int i, double v) {
  check_bind(sqlite3_bind_double(stmt_, i, v), *db_);
}

void Statement::bind_f64(int i, const std::optional<double>& v) {
  if (v)
    bind_f64(i, *v);
  else
    bind_null(i);
}

void Statement::run() {
  if (step()) {  // a row where none was expected: finish the statement anyway
    while (step()) {
    }
  }
  reset();
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(db_->get(), db_->path(), "SQLite error");
}

void Statement::reset() {
  sqlite3_reset(stmt_);
}

}  // namespace candle_graph::sqlite
