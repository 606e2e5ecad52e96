#include "output/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <system_error>

#include "candle_graph/error.hpp"
#include "output/test_hook.hpp"
#include "output/write_guard.hpp"

namespace candle_graph::output {
namespace fs = std::filesystem;

namespace {
std::string errno_text() {
  return std::strerror(errno);
}

constexpr std::string_view kTempMark = ".tmp-";

void ignore_failure(int /*result*/) noexcept {}

// What `.NAME.tmp-` is followed by: PID-RANDOM, at most 10 digits each.
constexpr std::size_t kTempSuffixBytes = 10 + 1 + 10;

std::string temp_prefix(const fs::path& target) {
  const std::size_t reserved = 1 + kTempMark.size() + kTempSuffixBytes;
  return "." + sibling_name(target, reserved) + std::string(kTempMark);
}

std::uint64_t test_write_limit() {
  const char* text = std::getenv(kTestWriteLimitVariable);
  std::uint64_t limit = std::numeric_limits<std::uint64_t>::max();
  if (text != nullptr) std::from_chars(text, text + std::strlen(text), limit);
  return limit;
}

// The PID in `.NAME.tmp-PID-RANDOM` when the name has that form after `prefix`.
std::optional<pid_t> temp_owner(std::string_view name, std::string_view prefix) {
  if (!name.starts_with(prefix)) return std::nullopt;
  name.remove_prefix(prefix.size());
  pid_t pid = 0;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
  if (ec != std::errc() || pid <= 0 || end == name.data() + name.size() || *end != '-')
    return std::nullopt;
  return pid;
}

// Whether `target` is written where it is (atomic_file.hpp): it exists and is no regular file
// once its links are followed, or it names an open descriptor, whose file (even a regular one,
// `-o /dev/stdout > out.json`) the caller's shell already chose.
bool written_in_place(const fs::path& target) {
  std::error_code ec;
  const fs::file_status final = fs::status(target, ec);
  if (ec || !fs::exists(final)) return false;
  if (!fs::is_regular_file(final)) return !fs::is_directory(final);
  if (fs::is_symlink(fs::symlink_status(target, ec))) {
    const fs::path link = fs::read_symlink(target, ec);
    if (!ec && link.string().starts_with("/proc/")) return true;  // /dev/stdout, /dev/stderr
  }
  // /dev/fd/N and /proc/self/fd/N: a directory of descriptors.
  const fs::path dir = fs::canonical(fs::absolute(target, ec).parent_path(), ec);
  return !ec && dir.string().starts_with("/proc/");
}

// Creates `path` (which must not exist) for writing, to replace the regular file `replaced`, with
// no more permissions than `replaced` has before a byte is in it, so that a private file is never
// readable by others while its replacement is written; then gives it the owner and mode of
// `replaced` (copy_owner_and_mode). Null with errno on failure.
std::FILE* create_like(const fs::path& path, const struct stat& replaced) {
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, replaced.st_mode & 0777);
  if (fd < 0) return nullptr;
  copy_owner_and_mode(fd, replaced);
  std::FILE* file = ::fdopen(fd, "wb");
  if (file == nullptr) {
    const int saved = errno;
    ::close(fd);
    ::unlink(path.c_str());
    errno = saved;
  }
  return file;
}

}  // namespace

void copy_owner_and_mode(int fd, const struct stat& replaced) noexcept {
  // Best effort, as an editor does when it saves: another user's file keeps this process as its
  // owner (and its group, unless this process is in it), a file system without owners or modes
  // has its own, and the file stays as it was created. fchown comes first: it may clear set-ID
  // bits, which are not copied anyway.
  if (::fchown(fd, replaced.st_uid, replaced.st_gid) != 0)
    ignore_failure(::fchown(fd, static_cast<uid_t>(-1), replaced.st_gid));
  ignore_failure(::fchmod(fd, replaced.st_mode & 0777));
}

fs::path file_behind_links(const fs::path& target) {
  std::error_code ec;
  if (!fs::is_symlink(fs::symlink_status(target, ec)) || !fs::is_regular_file(target, ec))
    return target;
  // No bundle guard here: refuse_inside_bundle(target) already follows the links.
  fs::path real = fs::canonical(target, ec);
  return ec ? target : real;
}

std::string sibling_name(const fs::path& target, std::size_t reserved) {
  constexpr std::size_t kNameMax = 255;  // NAME_MAX of Linux's file systems
  std::string name = target.filename().string();
  const std::size_t room = reserved < kNameMax ? kNameMax - reserved : 0;
  if (name.size() <= room) return name;
  std::size_t cut = room;
  // Not inside a UTF-8 sequence: back to the byte that starts a character.
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;
  name.resize(cut);
  return name;
}

fs::path temp_sibling(const fs::path& target) {
  std::random_device rd;
  return target.parent_path() /
         (temp_prefix(target) + std::to_string(::getpid()) + "-" + std::to_string(rd()));
}

void remove_stale_temps(const fs::path& target) noexcept {
  const std::string prefix = temp_prefix(target);
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto owner = temp_owner(it->path().filename().native(), prefix);
    // ESRCH: no such process. A running owner (even of another user: EPERM) keeps its file.
    if (owner && ::kill(*owner, 0) != 0 && errno == ESRCH) {
      std::error_code ignored;
      fs::remove(it->path(), ignored);
    }
  }
}

AtomicFile::AtomicFile(fs::path target)
    : target_(std::move(target)), write_limit_(test_write_limit()) {
  refuse_inside_bundle(target_);
  if (written_in_place(target_)) {
    file_ = std::fopen(target_.c_str(), "wb");
    if (file_ == nullptr)
      throw Error(ErrorKind::io, target_.string(), 0, "cannot open output file: " + errno_text());
    return;
  }
  file_path_ = file_behind_links(target_);
  parents_.create(file_path_.parent_path(), target_.string());
  remove_stale_temps(file_path_);
  struct stat replaced {};
  replacing_ = ::stat(file_path_.c_str(), &replaced) == 0 && S_ISREG(replaced.st_mode);
  temp_ = temp_sibling(file_path_);
  int error = 0;
  // Created and registered with interrupts held off: a name registered but not created could
  // be another file's, and a file created but not registered would be left by a signal.
  temp_on_interrupt_ = RemovedOnInterrupt::create(
      [&] {
        file_ = replacing_ ? create_like(temp_, replaced) : std::fopen(temp_.c_str(), "wbx");
        return file_ != nullptr ? temp_ : fs::path();
      },
      error);
  if (error != 0)
    throw Error(ErrorKind::io, target_.string(), 0,
                std::string("cannot create output file: ") + std::strerror(error));
}

AtomicFile::~AtomicFile() {
  if (file_ == nullptr && !finished_) return;  // committed, or never opened
  if (file_ != nullptr) std::fclose(file_);
  std::error_code ec;
  if (!in_place()) fs::remove(temp_, ec);
}

void AtomicFile::write(std::string_view bytes) {
  if (file_ == nullptr) throw Error(ErrorKind::io, target_.string(), 0, "write after commit");
  if (bytes.empty()) return;
  written_ += bytes.size();
  if (written_ > write_limit_) {
    errno = ENOSPC;
    throw Error(ErrorKind::io, target_.string(), 0,
                "cannot write output file: " + errno_text() + " (" + kTestWriteLimitVariable + ")");
  }
  try {
    if (!direct_tried_ && !in_place()) {
      // From the first byte: page-cache pages are fresh memory, which a guest may get from its
      // host slowly, and the buffered bytes of a file that replaces another are written back
      // (start_writeback, then the rename), a writeback the direct writes would queue behind.
      direct_tried_ = true;
      const auto slow_stage = std::chrono::nanoseconds(static_cast<std::chrono::nanoseconds::rep>(
          size_from_env(kTestDirectStageVariable,
                        static_cast<std::size_t>(DirectWrites::kSlowStage.count()))));
      direct_ = DirectWrites::start(::fileno(file_), slow_stage);
    }
    if (direct_) {
      if (!direct_->write(bytes)) direct_.reset();
      return;
    }
  } catch (const std::system_error& e) {
    throw Error(ErrorKind::io, target_.string(), 0,
                "cannot write output file: " + e.code().message());
  }
  write_buffered(bytes);
}

void AtomicFile::write_buffered(std::string_view bytes) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size())
    throw Error(ErrorKind::io, target_.string(), 0, "cannot write output file: " + errno_text());
  buffered_ += bytes.size();
  if (replacing_ && buffered_ - written_back_ >= kWritebackEvery) start_writeback();
}

void AtomicFile::flush() {
  if (std::fflush(file_) != 0)
    throw Error(ErrorKind::io, target_.string(), 0, "cannot write output file: " + errno_text());
}

// ext4 (auto_da_alloc) writes a file back when it is renamed over an existing one, inside the
// rename: 50 ms for a 130 MB export, all of it on the path to the exit. Starting that writeback
// as the bytes come (asynchronously: nothing waits for the disk) spreads it over the writing.
void AtomicFile::start_writeback() {
  flush();
  // Advice only: an error here (a file system without it) changes nothing that is written.
  ::sync_file_range(::fileno(file_), static_cast<off_t>(written_back_),
                    static_cast<off_t>(buffered_ - written_back_), SYNC_FILE_RANGE_WRITE);
  written_back_ = buffered_;
}

void AtomicFile::finish() {
  if (file_ == nullptr)
    throw Error(ErrorKind::io, target_.string(), 0, "output file finished twice");
  if (direct_) {
    try {
      direct_->finish();
    } catch (const std::system_error& e) {
      throw Error(ErrorKind::io, target_.string(), 0,
                  "cannot write output file: " + e.code().message());
    }
    direct_.reset();
  }
  const bool flushed = std::fflush(file_) == 0;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  std::error_code ec;
  if (!flushed || !closed) {
    const std::string why = errno_text();
    if (!in_place()) fs::remove(temp_, ec);
    throw Error(ErrorKind::io, target_.string(), 0, "cannot write output file: " + why);
  }
  finished_ = true;
}

void AtomicFile::commit() {
  if (file_ != nullptr)
    finish();
  else if (!finished_)
    throw Error(ErrorKind::io, target_.string(), 0, "output file committed twice");
  finished_ = false;
  if (in_place()) return;
  std::error_code ec;
  fs::rename(temp_, file_path_, ec);
  if (ec) {
    const std::string why = ec.message();  // before remove() reuses ec
    fs::remove(temp_, ec);
    throw Error(ErrorKind::io, target_.string(), 0, "cannot replace output file: " + why);
  }
  temp_on_interrupt_.reset();  // after the rename: the output is complete where it belongs
  parents_.keep();
}

void write_file_atomic(const fs::path& target, std::string_view bytes) {
  AtomicFile file(target);
  file.write(bytes);
  file.commit();
}

bool same_file(const fs::path& a, const fs::path& b) noexcept {
  std::error_code ec;
  const bool eq = fs::equivalent(a, b, ec);
  return !ec && eq;
}

}  // namespace candle_graph::output
