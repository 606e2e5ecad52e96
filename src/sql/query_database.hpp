// The database a `sql` statement runs against, built from the command's sources: one database
// file opened read-only as it is, or an in-memory candle-graph/sql/1 database holding every
// trace (loaded like `export --format sqlite`) and the rows of every database file given.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string_view>

#include "evidence/evidence_packet.hpp"
#include "sqlite/sqlite_handle.hpp"
#include "sqlite/step_progress.hpp"

namespace candle_graph::sql {

// True when the file starts with the SQLite header ("SQLite format 3\0"); false for anything
// else (a trace). Throws Error naming the path when it cannot be read.
bool is_sqlite_file(const std::filesystem::path& path);

class QueryDatabase {
 public:
  // One database file, opened read-only (never created, never written).
  static QueryDatabase open_file(const std::filesystem::path& path);
  // An empty in-memory database with the candle-graph/sql/1 schema, ready for add_run and
  // add_database, then finish_loading.
  static QueryDatabase in_memory();

  // Loads one trace; `analyse` builds its packet while the document's own tables load. The
  // load's steps go to `progress` (sqlite::load_run_overlapped).
  void add_run(const TraceDocument& doc, std::string_view source,
               const std::function<evidence::EvidencePacket()>& analyse,
               const sqlite::StepProgress& progress = {});
  // Copies every row of a candle-graph/sql/1 database file (opened read-only) into this one.
  // A run_id already present is refused, naming it and the file.
  void add_database(const std::filesystem::path& path);
  // Builds the indices (step "indices" of `progress`) and commits the load.
  void finish_loading(const sqlite::StepProgress& progress = {});

  const sqlite::Connection& connection() const noexcept { return *db_; }

 private:
  explicit QueryDatabase(std::unique_ptr<sqlite::Connection> db) : db_(std::move(db)) {}
  std::unique_ptr<sqlite::Connection> db_;
  int attached_ = 0;
};

}  // namespace candle_graph::sql
