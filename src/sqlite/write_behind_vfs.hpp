// A SQLite VFS over the platform's own ("unix") whose main database files write behind: each
// page SQLite writes is copied to a queue and written to the file by a thread of its own, so the
// connection goes on building the next pages while the kernel copies the last ones into the page
// cache. The export writes every page of its database once and reads few back (rows and index
// entries arrive in key order), and one connection is its critical path; its `pwrite`s cost that
// path about 0.1 s of 1.2 s at 98 MB.
//
// What SQLite sees is unchanged: every read, mapping, size query, truncation, lock, file control
// and close first waits until the queue is written, so SQLite only ever reads what it wrote. A
// failed write is returned by the next call on the file, with the code the platform's VFS gives
// (SQLITE_FULL when the disk is full), and fails the statement that made the call; at the latest
// COMMIT's (the file control SQLite sends in place of an fsync when `synchronous` is OFF), since
// SQLite ignores an error from closing a file. Journals, temporary files and files whose writer
// cannot start are the platform's, unchanged.
#pragma once

namespace candle_graph::sqlite {

// The VFS's name for sqlite3_open_v2, registered on first use (not as the default VFS); null when
// SQLite has no default VFS to wrap or refused the registration (then open with the default).
const char* write_behind_vfs() noexcept;

// Counters of this process's write-behind files, for tests: pages queued, waits for the queue to
// be written (a read, a mapping, a size query… each waits), and the writes the writer thread made
// (consecutive pages are written in one `pwritev`).
struct WriteBehindCounts {
  unsigned long long pages_queued = 0;
  unsigned long long waits = 0;
  unsigned long long writes = 0;
};
WriteBehindCounts write_behind_counts() noexcept;

}  // namespace candle_graph::sqlite
