// RAII over the SQLite C API, shared by the database writer (src/export) and the query runner
// (src/sql): a connection, a prepared statement with typed binds, and errors that carry SQLite's
// own message and the database path.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace candle_graph::sqlite {

// Throws candle_graph::Error(path, 0, what + ": " + SQLite's message for `db`).
[[noreturn]] void fail(sqlite3* db, const std::string& path, std::string_view what);

// How a connection's main database file is written: by SQLite's thread (the platform's VFS), or
// behind it by a thread of its own (write_behind_vfs.hpp; the platform's VFS when unavailable).
enum class PageWrites { direct, behind };

class Connection {
 public:
  // sqlite3_open_v2 with `flags`; `path` is also the name errors carry (":memory:" is fine).
  Connection(const std::string& path, int flags, PageWrites writes = PageWrites::direct);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  sqlite3* get() const noexcept { return db_; }
  const std::string& path() const noexcept { return path_; }
  // Runs one or more statements that return no rows the caller needs (DDL, PRAGMA, BEGIN…).
  void exec(const std::string& sql) const;
  // Closes now (so a file can be renamed or removed); errors name the path.
  void close();

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

class Statement {
 public:
  Statement(const Connection& db, std::string_view sql);
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  sqlite3_stmt* get() const noexcept { return stmt_; }

  // Binds by 1-based index. Text is bound SQLITE_TRANSIENT unless `stable` says the bytes
  // outlive the next step() (the loader binds views into the trace document without copying).
  void bind_null(int i);
  void bind_text(int i, std::string_view s, bool stable = true);
  void bind_text(int i, const std::optional<std::string_view>& s);
  void bind_i64(int i, std::int64_t v);
  // SQLite integers are signed 64-bit: a value above INT64_MAX is stored as REAL (the nearest
  // double), never wrapped to a negative number.
  void bind_u64(int i, std::uint64_t v);
  void bind_u64(int i, const std::optional<std::uint64_t>& v);
  void bind_f64(int i, double v);
  void bind_f64(int i, const std::optional<double>& v);
  void bind_bool(int i, bool v) { bind_i64(i, v ? 1 : 0); }

  // Steps a statement that returns no row, then resets it for the next binds.
  void run();
  // Steps once: true when a row is ready, false when done. Errors throw.
  bool step();
  void reset();

 private:
  const Connection* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace candle_graph::sqlite
