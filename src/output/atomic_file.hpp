// Safe output files: content goes to a temporary sibling that is renamed over the target only
// when complete, so a crash, a full disk or an error never leaves a partial file. Parent
// directories are created. Errors name the path.
//
// The temporary sibling is `.NAME.tmp-PID-RANDOM` beside the target. A process killed before its
// rename (SIGKILL, the OOM killer) cannot remove it; the next write of the same target removes
// every such sibling whose process is gone.
//
// A file that replaces another keeps that file's permission bits, and its owner and group where
// this process may give them (copy_owner_and_mode): `chmod 600 out.json` stays private.
//
// A target that is a link to a regular file is replaced where that file is: the link stays, and
// the file it names gets the new contents, as a plain write through the link would give it.
//
// An output's bytes are written around the page cache, one 4 MiB stage at a time, while the disk
// keeps up (output/direct_writes.hpp); an output smaller than a stage, and the last part of any
// output, go through the page cache at commit. The file's contents are the same either way.
//
// A target that is no regular file (/dev/null, a terminal, a pipe, a socket) or that names an
// open descriptor (/dev/stdout, /dev/fd/N, /proc/self/fd/N) is written where it is, as any tool
// writes to it: there is nothing there to replace, and a temporary file renamed over it would
// put a regular file in the place of the device or the link (as root, in /dev). Such an output
// is a stream, so a failure can leave part of it written.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string_view>

#include "output/created_parents.hpp"
#include "output/direct_writes.hpp"
#include "output/interrupt_cleanup.hpp"

namespace candle_graph::output {

class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path target);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();  // discards the temporary file unless commit() succeeded

  void write(std::string_view bytes);
  // Completes the writes and closes the file (fsync-free) without putting it in place: a write
  // error (a full disk) surfaces here. Outputs that land together finish all, then commit all.
  void finish();
  // finish() unless done, then rename over the target.
  void commit();
  // Still taking writes: neither finished nor committed.
  bool is_open() const noexcept { return file_ != nullptr; }

  const std::filesystem::path& target() const noexcept { return target_; }

 private:
  std::filesystem::path target_;     // as given, in every message
  std::filesystem::path file_path_;  // the file replaced: target_, or the file its links name
  std::filesystem::path temp_;
  CreatedParents parents_;  // removed after the temporary file when the output is not committed
  RemovedOnInterrupt temp_on_interrupt_;
  std::FILE* file_ = nullptr;
  bool finished_ = false;  // closed, and not yet renamed into place
  void write_buffered(std::string_view bytes);
  void flush();
  void start_writeback();
  // Written to the target itself (see above): there is no temporary file.
  bool in_place() const noexcept { return temp_.empty(); }
  // A file that replaces another one starts its writeback every so many bytes.
  static constexpr std::uint64_t kWritebackEvery = std::uint64_t{16} << 20;
  std::uint64_t written_ = 0;
  std::uint64_t buffered_ = 0;      // the bytes written through the page cache (the FILE)
  std::uint64_t written_back_ = 0;  // the buffered bytes whose writeback was started
  std::unique_ptr<DirectWrites> direct_;
  bool direct_tried_ = false;
  bool replacing_ = false;     // the target existed when the file was opened
  std::uint64_t write_limit_;  // kTestWriteLimitVariable, else no limit
};

// Where the file replaced by an output named `target` lives: for a link (or a chain of links) to
// a regular file, that file, so that the links stay and the file they name gets the bytes, as a
// plain write through them would; otherwise `target` itself (a dangling link is replaced).
std::filesystem::path file_behind_links(const std::filesystem::path& target);
// Gives `fd`, a file about to replace the regular file whose status is `replaced`, that file's
// permission bits (read, write and execute for owner, group and others; set-ID bits are not kept)
// and, as far as this process may give them, its owner and group. Best effort: failures are not
// errors, the file keeps what it was created with.
void copy_owner_and_mode(int fd, const struct stat& replaced) noexcept;
// The temporary sibling of `target` for this process: `.NAME.tmp-PID-RANDOM` in its directory,
// with NAME cut short (sibling_name) where the whole would pass the file system's 255 bytes.
std::filesystem::path temp_sibling(const std::filesystem::path& target);
// `target`'s file name, cut at a UTF-8 character boundary to leave `reserved` bytes of a 255-byte
// file name (NAME_MAX) for what a hidden sibling adds to it: a 240-byte output name is valid, and
// its `.NAME.tmp-PID-RANDOM` sibling, uncut, was not ("File name too long").
std::string sibling_name(const std::filesystem::path& target, std::size_t reserved);
// Removes the temporary siblings of `target` left by processes that no longer run.
void remove_stale_temps(const std::filesystem::path& target) noexcept;

// Tests make writes fail as on a full disk, where mounting a small file system is not allowed:
// when the environment variable CANDLE_GRAPH_TEST_WRITE_LIMIT holds N, an output file fails with
// ENOSPC once more than N bytes were written to it.
inline constexpr const char* kTestWriteLimitVariable = "CANDLE_GRAPH_TEST_WRITE_LIMIT";
// Tests make the disk look slow to the direct writes, which then go back to the page cache: when
// CANDLE_GRAPH_TEST_DIRECT_STAGE_NS holds N, a stage written in more than N ns on average is slow.
inline constexpr const char* kTestDirectStageVariable = "CANDLE_GRAPH_TEST_DIRECT_STAGE_NS";

void write_file_atomic(const std::filesystem::path& target, std::string_view bytes);

// True when both paths name the same existing file (so writing one would destroy the other).
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) noexcept;

}  // namespace candle_graph::output
