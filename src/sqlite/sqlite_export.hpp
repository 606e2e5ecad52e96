// `export --format sqlite`: writes runs into a candle-graph/sql/1 database file atomically. The
// database is built in a temporary sibling (a copy of the existing file with --append) and renamed
// over the target only when every run loaded; any failure leaves the target as it was.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string_view>

#include "evidence/evidence_packet.hpp"
#include "output/created_parents.hpp"
#include "output/interrupt_cleanup.hpp"
#include "sqlite/sqlite_handle.hpp"
#include "sqlite/step_progress.hpp"

namespace candle_graph::sqlite {

class DatabaseFile {
 public:
  // Without `append` the target must not exist (Error otherwise). With it, a missing target
  // starts empty and an existing one must be a candle-graph/sql/1 database.
  DatabaseFile(std::filesystem::path target, bool append);
  DatabaseFile(const DatabaseFile&) = delete;
  DatabaseFile& operator=(const DatabaseFile&) = delete;
  ~DatabaseFile();  // removes the temporary file unless commit() succeeded

  // Loads one run (Error naming the run_id when the database already holds it). `analyse`
  // builds the packet of `doc`; it runs while the document's own tables load
  // (load_run_overlapped), which reports its steps to `progress`.
  void add_run(const TraceDocument& doc, std::string_view source,
               const std::function<evidence::EvidencePacket()>& analyse,
               const StepProgress& progress = {});
  // Indices (step "indices" of `progress`), COMMIT, close, rename over the target.
  void commit(const StepProgress& progress = {});

  const std::filesystem::path& target() const noexcept { return target_; }

 private:
  void create_empty_temp();
  void open_connection();
  void copy_for_append();
  std::filesystem::path target_;     // as given, in every message
  std::filesystem::path file_path_;  // the file replaced: target_, or the file its links name
  std::filesystem::path temp_;
  output::CreatedParents parents_;  // removed after the temporary file unless committed
  output::RemovedOnInterrupt temp_on_interrupt_;
  std::optional<Connection> db_;
  bool committed_ = false;
};

}  // namespace candle_graph::sqlite
