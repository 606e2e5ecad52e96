#include "sqlite/write_behind_vfs.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

namespace candle_graph::sqlite {

namespace {

std::atomic<unsigned long long> pages_queued{0};
std::atomic<unsigned long long> waits{0};
std::atomic<unsigned long long> writes{0};

// At most this many bytes wait in the queue: the connection waits for the writer beyond it, so
// a slow disk costs memory once, not without bound.
constexpr std::size_t kQueuedBytesLimit = std::size_t{4} << 20;
// The writer is woken when this much is queued (or when the connection waits for the queue):
// waking it for every 16 KiB page cost more system time than the writes it took off the
// connection.
constexpr std::size_t kBatchBytes = std::size_t{1} << 20;

// Pages SQLite wrote, in the order it wrote them, and the thread that writes them to the file
// through a descriptor of its own (SQLite's file object is only ever used by SQLite's thread).
class PageWriter {
 public:
  // Null when the file cannot be opened again or the thread cannot start: the caller then
  // writes through SQLite's own file as usual.
  static std::unique_ptr<PageWriter> start(const char* path) {
    const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return nullptr;
    auto writer = std::unique_ptr<PageWriter>(new (std::nothrow) PageWriter(fd));
    if (!writer) {
      ::close(fd);
      return nullptr;
    }
    try {
      writer->thread_ = std::thread([w = writer.get()] { w->run(); });
    } catch (...) {
      return nullptr;  // the destructor closes the descriptor
    }
    return writer;
  }

  PageWriter(const PageWriter&) = delete;
  PageWriter& operator=(const PageWriter&) = delete;

  ~PageWriter() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    work_.notify_one();
    if (thread_.joinable()) thread_.join();
    ::close(fd_);
  }

  // Copies the page to the queue; returns the error of an earlier write, if one failed (the page
  // is then dropped: the statement fails and the database is never renamed into place).
  int queue(const void* bytes, int amount, sqlite3_int64 offset) {
    std::unique_lock lock(mutex_);
    space_.wait(lock, [&] { return failed_errno_ != 0 || queued_bytes_ < kQueuedBytesLimit; });
    if (failed_errno_ != 0) return error_code(SQLITE_IOERR_WRITE);
    std::vector<char> page = take_buffer();
    const auto* first = static_cast<const char*>(bytes);
    page.assign(first, first + amount);
    queued_bytes_ += page.size();
    queue_.push_back({offset, std::move(page)});
    const bool wake = queued_bytes_ >= kBatchBytes && !writing_;
    lock.unlock();
    if (wake) work_.notify_one();
    pages_queued.fetch_add(1, std::memory_order_relaxed);
    return SQLITE_OK;
  }

  // Waits until every queued page is in the file; returns the error of a failed write, if any,
  // as `code` (SQLite's error for the operation that waited) or SQLITE_FULL.
  int wait_written(int code) {
    std::unique_lock lock(mutex_);
    if (queue_.empty() && !writing_) return failed_errno_ != 0 ? error_code(code) : SQLITE_OK;
    waits.fetch_add(1, std::memory_order_relaxed);
    waiting_ = true;
    work_.notify_one();
    space_.wait(lock, [&] { return failed_errno_ != 0 || (queue_.empty() && !writing_); });
    waiting_ = false;
    return failed_errno_ != 0 ? error_code(code) : SQLITE_OK;
  }

 private:
  struct Page {
    sqlite3_int64 offset;
    std::vector<char> bytes;
  };

  explicit PageWriter(int fd) : fd_(fd) {}

  // A disk that is full reads as SQLITE_FULL, as the platform's VFS reports it; any other
  // failure as the operation's own I/O error.
  int error_code(int code) const { return failed_errno_ == ENOSPC ? SQLITE_FULL : code; }

  std::vector<char> take_buffer() {
    if (spare_.empty()) return {};
    std::vector<char> buffer = std::move(spare_.back());
    spare_.pop_back();
    return buffer;
  }

  void run() {
    std::vector<Page> batch;
    std::unique_lock lock(mutex_);
    for (;;) {
      work_.wait(lock, [&] {
        return stopping_ || (!queue_.empty() && (waiting_ || queued_bytes_ >= kBatchBytes));
      });
      if (queue_.empty()) return;  // stopping, everything written
      batch.clear();
      while (!queue_.empty()) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      writing_ = true;
      lock.unlock();
      // failed_errno_ is read without the lock: only this thread sets it.
      const int error = failed_errno_ != 0 ? 0 : write_batch(batch);
      lock.lock();
      writing_ = false;
      if (error != 0 && failed_errno_ == 0) failed_errno_ = error;
      for (Page& page : batch) {
        queued_bytes_ -= page.bytes.size();
        spare_.push_back(std::move(page.bytes));
      }
      space_.notify_all();
    }
  }

  // Writes the batch in order, each run of consecutive pages in one call (a page written twice
  // is written twice, the later last); the errno of the first failure, else 0.
  int write_batch(const std::vector<Page>& batch) {
    std::vector<iovec> parts;
    std::size_t i = 0;
    while (i < batch.size()) {
      const sqlite3_int64 start = batch[i].offset;
      sqlite3_int64 end = start;
      parts.clear();
      while (i < batch.size() && batch[i].offset == end && parts.size() < IOV_MAX) {
        parts.push_back({const_cast<char*>(batch[i].bytes.data()), batch[i].bytes.size()});
        end += static_cast<sqlite3_int64>(batch[i].bytes.size());
        ++i;
      }
      if (const int error = write_all(parts, start); error != 0) return error;
    }
    return 0;
  }

  int write_all(std::vector<iovec>& parts, sqlite3_int64 offset) {
    std::size_t first = 0;
    while (first < parts.size()) {
      writes.fetch_add(1, std::memory_order_relaxed);
      const ssize_t wrote =
          ::pwritev(fd_, parts.data() + first, static_cast<int>(parts.size() - first), offset);
      if (wrote < 0) {
        if (errno == EINTR) continue;
        return errno;
      }
      if (wrote == 0) return ENOSPC;  // as the platform's VFS reads a write that made no progress
      offset += wrote;
      auto left = static_cast<std::size_t>(wrote);
      while (first < parts.size() && left >= parts[first].iov_len) left -= parts[first++].iov_len;
      if (left > 0) {
        parts[first].iov_base = static_cast<char*>(parts[first].iov_base) + left;
        parts[first].iov_len -= left;
      }
    }
    return 0;
  }

  const int fd_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable work_;   // pages queued, or stopping
  std::condition_variable space_;  // pages written (room in the queue, or the queue empty)
  std::deque<Page> queue_;
  std::vector<std::vector<char>> spare_;  // written pages' buffers, for the next ones
  std::size_t queued_bytes_ = 0;
  bool writing_ = false;
  bool waiting_ = false;  // the connection waits for the queue to be written
  bool stopping_ = false;
  int failed_errno_ = 0;
};

// The file SQLite holds: ours, with the platform's file object after it in the same block.
struct WriteBehindFile {
  sqlite3_file base;
  sqlite3_file* real;
  PageWriter* writer;  // null: every call goes straight to `real`
};

sqlite3_vfs* platform_vfs = nullptr;

constexpr int kRealOffset =
    static_cast<int>((sizeof(WriteBehindFile) + alignof(std::max_align_t) - 1) /
                     alignof(std::max_align_t) * alignof(std::max_align_t));

WriteBehindFile* self(sqlite3_file* file) {
  return reinterpret_cast<WriteBehindFile*>(file);
}

sqlite3_file* real_of(sqlite3_file* file) {
  return self(file)->real;
}

// Waits for the queue before a call that reads or changes the file SQLite sees.
int written(sqlite3_file* file, int code) {
  PageWriter* writer = self(file)->writer;
  return writer ? writer->wait_written(code) : SQLITE_OK;
}

int on_close(sqlite3_file* file) {
  WriteBehindFile* f = self(file);
  int rc = SQLITE_OK;
  if (f->writer) {
    rc = f->writer->wait_written(SQLITE_IOERR_WRITE);
    delete f->writer;
    f->writer = nullptr;
  }
  const int closed = f->real->pMethods ? f->real->pMethods->xClose(f->real) : SQLITE_OK;
  return rc != SQLITE_OK ? rc : closed;
}

int on_read(sqlite3_file* file, void* out, int amount, sqlite3_int64 offset) {
  if (const int rc = written(file, SQLITE_IOERR_READ); rc != SQLITE_OK) return rc;
  return real_of(file)->pMethods->xRead(real_of(file), out, amount, offset);
}

int on_write(sqlite3_file* file, const void* bytes, int amount, sqlite3_int64 offset) {
  if (PageWriter* writer = self(file)->writer) return writer->queue(bytes, amount, offset);
  return real_of(file)->pMethods->xWrite(real_of(file), bytes, amount, offset);
}

int on_truncate(sqlite3_file* file, sqlite3_int64 size) {
  if (const int rc = written(file, SQLITE_IOERR_TRUNCATE); rc != SQLITE_OK) return rc;
  return real_of(file)->pMethods->xTruncate(real_of(file), size);
}

int on_sync(sqlite3_file* file, int flags) {
  if (const int rc = written(file, SQLITE_IOERR_FSYNC); rc != SQLITE_OK) return rc;
  return real_of(file)->pMethods->xSync(real_of(file), flags);
}

int on_file_size(sqlite3_file* file, sqlite3_int64* size) {
  if (const int rc = written(file, SQLITE_IOERR_FSTAT); rc != SQLITE_OK) return rc;
  return real_of(file)->pMethods->xFileSize(real_of(file), size);
}

int on_lock(sqlite3_file* file, int level) {
  if (const int rc = written(file, SQLITE_IOERR_LOCK); rc != SQLITE_OK) return rc;
  return real_of(file)->pMethods->xLock(real_of(file), level);
}

int on_unlock(sqlite3_file* file, int level) {
  if (const int rc = written(file, SQLITE_IOERR_UNLOCK); rc != SQLITE_OK) return rc;
  return real_of(file)->pMethods->xUnlock(real_of(file), level);
}

int on_check_reserved_lock(sqlite3_file* file, int* reserved) {
  return real_of(file)->pMethods->xCheckReservedLock(real_of(file), reserved);
}

int on_file_control(sqlite3_file* file, int op, void* arg) {
  if (const int rc = written(file, SQLITE_IOERR); rc != SQLITE_OK) return rc;
  return real_of(file)->pMethods->xFileControl(real_of(file), op, arg);
}

int on_sector_size(sqlite3_file* file) {
  return real_of(file)->pMethods->xSectorSize(real_of(file));
}

int on_device_characteristics(sqlite3_file* file) {
  return real_of(file)->pMethods->xDeviceCharacteristics(real_of(file));
}

int on_shm_map(sqlite3_file* file, int region, int size, int extend, void volatile** out) {
  const sqlite3_io_methods* m = real_of(file)->pMethods;
  return m->iVersion >= 2 && m->xShmMap ? m->xShmMap(real_of(file), region, size, extend, out)
                                        : SQLITE_IOERR_SHMMAP;
}

int on_shm_lock(sqlite3_file* file, int offset, int n, int flags) {
  const sqlite3_io_methods* m = real_of(file)->pMethods;
  return m->iVersion >= 2 && m->xShmLock ? m->xShmLock(real_of(file), offset, n, flags)
                                         : SQLITE_IOERR_SHMLOCK;
}

void on_shm_barrier(sqlite3_file* file) {
  const sqlite3_io_methods* m = real_of(file)->pMethods;
  if (m->iVersion >= 2 && m->xShmBarrier) m->xShmBarrier(real_of(file));
}

int on_shm_unmap(sqlite3_file* file, int delete_flag) {
  const sqlite3_io_methods* m = real_of(file)->pMethods;
  return m->iVersion >= 2 && m->xShmUnmap ? m->xShmUnmap(real_of(file), delete_flag) : SQLITE_OK;
}

int on_fetch(sqlite3_file* file, sqlite3_int64 offset, int amount, void** out) {
  *out = nullptr;
  if (const int rc = written(file, SQLITE_IOERR_MMAP); rc != SQLITE_OK) return rc;
  const sqlite3_io_methods* m = real_of(file)->pMethods;
  return m->iVersion >= 3 && m->xFetch ? m->xFetch(real_of(file), offset, amount, out) : SQLITE_OK;
}

int on_unfetch(sqlite3_file* file, sqlite3_int64 offset, void* page) {
  const sqlite3_io_methods* m = real_of(file)->pMethods;
  return m->iVersion >= 3 && m->xUnfetch ? m->xUnfetch(real_of(file), offset, page) : SQLITE_OK;
}

constexpr sqlite3_io_methods kMethods = {
    3,
    on_close,
    on_read,
    on_write,
    on_truncate,
    on_sync,
    on_file_size,
    on_lock,
    on_unlock,
    on_check_reserved_lock,
    on_file_control,
    on_sector_size,
    on_device_characteristics,
    on_shm_map,
    on_shm_lock,
    on_shm_barrier,
    on_shm_unmap,
    on_fetch,
    on_unfetch,
};

int on_open(sqlite3_vfs*, const char* name, sqlite3_file* file, int flags, int* out_flags) {
  WriteBehindFile* f = self(file);
  f->base.pMethods = nullptr;
  f->real = reinterpret_cast<sqlite3_file*>(reinterpret_cast<char*>(file) + kRealOffset);
  f->writer = nullptr;
  const int rc = platform_vfs->xOpen(platform_vfs, name, f->real, flags, out_flags);
  if (rc != SQLITE_OK) return rc;
  if (name && (flags & SQLITE_OPEN_MAIN_DB) && (flags & SQLITE_OPEN_READWRITE))
    f->writer = PageWriter::start(name).release();
  f->base.pMethods = &kMethods;
  return SQLITE_OK;
}

// Everything but opening a file is the platform VFS's own.
int on_delete(sqlite3_vfs*, const char* name, int sync_dir) {
  return platform_vfs->xDelete(platform_vfs, name, sync_dir);
}
int on_access(sqlite3_vfs*, const char* name, int flags, int* result) {
  return platform_vfs->xAccess(platform_vfs, name, flags, result);
}
int on_full_pathname(sqlite3_vfs*, const char* name, int size, char* out) {
  return platform_vfs->xFullPathname(platform_vfs, name, size, out);
}
void* on_dl_open(sqlite3_vfs*, const char* name) {
  return platform_vfs->xDlOpen(platform_vfs, name);
}
void on_dl_error(sqlite3_vfs*, int size, char* out) {
  platform_vfs->xDlError(platform_vfs, size, out);
}
void (*on_dl_sym(sqlite3_vfs*, void* handle, const char* symbol))(void) {
  return platform_vfs->xDlSym(platform_vfs, handle, symbol);
}
void on_dl_close(sqlite3_vfs*, void* handle) {
  platform_vfs->xDlClose(platform_vfs, handle);
}
int on_randomness(sqlite3_vfs*, int size, char* out) {
  return platform_vfs->xRandomness(platform_vfs, size, out);
}
int on_sleep(sqlite3_vfs*, int microseconds) {
  return platform_vfs->xSleep(platform_vfs, microseconds);
}
int on_current_time(sqlite3_vfs*, double* out) {
  return platform_vfs->xCurrentTime(platform_vfs, out);
}
int on_get_last_error(sqlite3_vfs*, int size, char* out) {
  return platform_vfs->xGetLastError ? platform_vfs->xGetLastError(platform_vfs, size, out) : 0;
}
int on_current_time_int64(sqlite3_vfs*, sqlite3_int64* out) {
  return platform_vfs->xCurrentTimeInt64(platform_vfs, out);
}

constexpr const char* kName = "candle-graph-write-behind";

const char* register_vfs() noexcept {
  if (sqlite3_initialize() != SQLITE_OK) return nullptr;
  platform_vfs = sqlite3_vfs_find(nullptr);
  if (!platform_vfs || platform_vfs->iVersion < 2) return nullptr;
  static sqlite3_vfs vfs{};
  vfs.iVersion = 2;
  vfs.szOsFile = kRealOffset + platform_vfs->szOsFile;
  vfs.mxPathname = platform_vfs->mxPathname;
  vfs.zName = kName;
  vfs.xOpen = on_open;
  vfs.xDelete = on_delete;
  vfs.xAccess = on_access;
  vfs.xFullPathname = on_full_pathname;
  vfs.xDlOpen = on_dl_open;
  vfs.xDlError = on_dl_error;
  vfs.xDlSym = on_dl_sym;
  vfs.xDlClose = on_dl_close;
  vfs.xRandomness = on_randomness;
  vfs.xSleep = on_sleep;
  vfs.xCurrentTime = on_current_time;
  vfs.xGetLastError = on_get_last_error;
  vfs.xCurrentTimeInt64 = on_current_time_int64;
  return sqlite3_vfs_register(&vfs, /*makeDflt=*/0) == SQLITE_OK ? kName : nullptr;
}

}  // namespace

const char* write_behind_vfs() noexcept {
  static const char* const name = register_vfs();
  return name;
}

WriteBehindCounts write_behind_counts() noexcept {
  return {pages_queued.load(), waits.load(), writes.load()};
}

}  // namespace candle_graph::sqlite
