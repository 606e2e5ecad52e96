#include "sqlite/sqlite_export.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "candle_graph/error.hpp"
#include "output/atomic_file.hpp"
#include "output/write_guard.hpp"
#include "sqlite/sqlite_loader.hpp"
#include "sqlite/sqlite_schema.hpp"

namespace candle_graph::sqlite {

namespace fs = std::filesystem;

namespace {

// The temporary file is private to this process until the rename: no journal (a crash leaves
// only the temporary file, which is never renamed), no fsync, one exclusive lock. Building the
// indices reads every table back; mapped, those pages are read without a copy (mapping's one
// hazard, a file truncated under it, cannot happen to a private temporary file).
void tune_for_bulk_load(const Connection& db) {
  db.exec(
      "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA locking_mode = EXCLUSIVE;"
      "PRAGMA cache_size = -8192; PRAGMA mmap_size = 2147418112;");
}

// A new database's pages are 16 KiB instead of SQLite's 4 KiB: a quarter of the pages to fill,
// balance and write (one `pwrite` each: 46,000 of them for the 98 MB synth trace's 190 MB
// database, 11,600 with 16 KiB), 0.90x the export's time at 98 and 295 MB. Larger pages save
// more (0.83x at 64 KiB) but cost lookups at random places in clients that read through SQLite's
// default 2 MB page cache (1.3-1.9x at 16 KiB, 4-5x at 64 KiB; the sqlite3 shell), where scans
// and joins along the keys are level or faster (docs/sql.md). Set before the cache's size: set
// after it, the load's page cache held 24 MiB more and the export peaked 37 MiB higher (98 MB).
// An existing database (--append) keeps its page size: SQLite sets it only when the file is
// created.
void use_bulk_page_size(const Connection& db) {
  db.exec("PRAGMA page_size = 16384");
}

}  // namespace

DatabaseFile::DatabaseFile(fs::path target, bool append) : target_(std::move(target)) {
  // Written through its own temporary file (SQLite owns the writes), so the bundle guard that
  // output::AtomicFile applies to every other output is applied here.
  output::refuse_inside_bundle(target_);
  file_path_ = output::file_behind_links(target_);
  std::error_code ec;
  const bool exists = fs::exists(file_path_, ec);
  if (exists && !append)
    throw Error(target_.string(), 0,
                "the database exists; pass --append to add runs to it, or choose another path");
  parents_.create(file_path_.parent_path(), target_.string());
  output::remove_stale_temps(file_path_);
  temp_ = output::temp_sibling(file_path_);
  if (exists) {
    temp_on_interrupt_ = output::RemovedOnInterrupt(temp_);
    copy_for_append();
  } else {
    create_empty_temp();
  }
  try {
    open_connection();
    if (!exists) use_bulk_page_size(*db_);  // first: before the cache is sized
    tune_for_bulk_load(*db_);
    if (exists) {
      check_schema(*db_, "main", target_.string());
      db_->exec("BEGIN");
    } else {
      db_->exec("BEGIN");
      create_schema(*db_);
    }
  } catch (const Error& e) {
    db_.reset();
    fs::remove(temp_, ec);
    // Name the target, not the temporary file the connection was opened on.
    if (e.path() == temp_.string()) throw Error(target_.string(), e.line(), e.message());
    throw;
  } catch (...) {
    db_.reset();
    fs::remove(temp_, ec);
    throw;
  }
}

// SQLite's connection on the temporary file, which exists by now: SQLite must not create it. An
// interrupt may have removed it a moment ago (the signal's thread removes the registered paths,
// then their directories, while this thread goes on until the process ends), and a file created
// again here would keep the directories the output created from being removed. SQLite's "unable
// to open database file" does not say why; the system's reason is asked directly ("No such
// file or directory").
void DatabaseFile::open_connection() {
  try {
    db_.emplace(temp_.string(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, PageWrites::behind);
  } catch (const Error& e) {
    const int fd = ::open(temp_.c_str(), O_RDWR | O_CLOEXEC);
    const int error = errno;
    if (fd >= 0) {
      ::close(fd);
      throw;
    }
    throw Error(e.kind(), e.path(), e.line(), e.message() + " (" + std::strerror(error) + ")");
  }
}

// The new database's file, created here and not by SQLite, whose "unable to open database file"
// does not say why (a read-only file system, a full directory, no permission); SQLite takes an
// empty file for a new database. Created and registered for removal on an interrupt at once.
void DatabaseFile::create_empty_temp() {
  int error = 0;
  temp_on_interrupt_ = output::RemovedOnInterrupt::create(
      [&] {
        const int fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0) return fs::path();
        ::close(fd);
        return temp_;
      },
      error);
  if (error != 0)
    throw Error(ErrorKind::io, target_.string(), 0,
                std::string("cannot create output file: ") + std::strerror(error));
}

// The database that --append adds to is copied to the temporary file, which replaces it at the
// commit with its permission bits, owner and group (as output::AtomicFile keeps them).
void DatabaseFile::copy_for_append() {
  std::error_code ec;
  if (!fs::copy_file(file_path_, temp_, fs::copy_options::none, ec) || ec)
    throw Error(target_.string(), 0, "cannot copy the database for --append: " + ec.message());
  struct stat replaced {};
  const int fd = ::open(temp_.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd >= 0 && ::stat(file_path_.c_str(), &replaced) == 0)
    output::copy_owner_and_mode(fd, replaced);
  if (fd >= 0) ::close(fd);
}

DatabaseFile::~DatabaseFile() {
  if (committed_) return;
  db_.reset();
  std::error_code ec;
  fs::remove(temp_, ec);
}

void DatabaseFile::add_run(const TraceDocument& doc, std::string_view source,
                           const std::function<evidence::EvidencePacket()>& analyse,
                           const StepProgress& progress) {
  try {
    load_run_overlapped(*db_, doc, source, analyse, progress);
  } catch (const Error& e) {
    // Name the target, not the temporary file the connection is open on.
    if (e.path() == temp_.string()) throw Error(target_.string(), e.line(), e.message());
    throw;
  }
}

void DatabaseFile::commit(const StepProgress& progress) {
  try {
    create_indices(*db_, progress);
    db_->exec("COMMIT");
    db_->close();
  } catch (const Error& e) {
    throw Error(target_.string(), 0, e.message());
  }
  std::error_code ec;
  fs::rename(temp_, file_path_, ec);
  if (ec) throw Error(target_.string(), 0, "cannot rename the finished database: " + ec.message());
  committed_ = true;
  temp_on_interrupt_.reset();  // after the rename: the database is complete where it belongs
  parents_.keep();
}

}  // namespace candle_graph::sqlite
