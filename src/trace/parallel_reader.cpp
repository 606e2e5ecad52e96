// The pipeline: each thread, the calling one included, takes the next chunk of whole lines in file
// order, parses it into a recorder of its own, waits for its turn (every earlier chunk placed)
// and places the chunk's events into the one document assembler itself, from its own cache. So
// one chunk per thread is in flight, which bounds the memory the threads add: per thread, its
// 512 KiB of text and the events recorded from it. A chunk holds whole lines only, so a thread's
// line numbers count from the chunk's first line; placing shifts them by the lines of the chunks
// before. A parse error stops its chunk and is raised at the chunk's turn, after the events
// before it: whichever comes first in the file, an assembler error (placing) or a parse error,
// is the one raised, as in the single-threaded read. The placing runs one turn at a time, so the
// page faults of the document's growth are taken off it: a thread waiting for its turn maps the
// next stretches (a thread of its own for that cost more, in wake-ups and in the threads it
// preempted on two cores, than the faults it saved).
#include "trace/parallel_reader.hpp"
#include "trace/read_sizes.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <vector>

#include "output/test_hook.hpp"
#include "trace/chunk_recorder.hpp"
#include "trace/document_assembler.hpp"
#include "trace/file_read.hpp"
#include "trace/line_feeder.hpp"
#include "trace/memory_budget.hpp"
#include "trace/page_prefaulter.hpp"

namespace candle_graph {
namespace {

using read_sizes::kPadding;
using read_sizes::kProgressEvery;
using read_sizes::kReserveAfter;

constexpr std::size_t kChunkBytes = std::size_t{512} << 10;  // per chunk; in peak RSS per thread
constexpr std::size_t kFirstProbeBytes = 4096;  // a chunk's search for its first line start

// Tests force tiny chunks so that chunk boundaries fall at every place in their fixtures.
std::size_t chunk_bytes() {
  return output::size_from_env("CANDLE_GRAPH_TEST_CHUNK_BYTES", kChunkBytes);
}

struct Chunk {
  std::unique_ptr<char[]> data;
  std::size_t capacity = 0;  // excluding the padding
  std::size_t size = 0;
  bool at_file_start = false;
  bool final = false;  // the end of the file: its last line may lack a '\n'
  // A regular file is read by the reading threads themselves (pread): the chunk is the lines that
  // start in [begin, end) of the file, `last` when end is the file's size (read on to the end).
  struct Range {
    int fd = -1;
    std::uint64_t begin = 0, end = 0;
    bool last = false;
    std::uint64_t file_size = 0;  // when the read began
  };
  std::optional<Range> range;
  // What the thread that took it made of it.
  ChunkRecorder events;
  std::uint64_t lines = 0;
  std::optional<Error> error;
  std::optional<Error> after_lines;  // raised once the chunk's lines parsed without one
  std::exception_ptr failure;        // anything but an Error (out of memory)

  void reserve(std::size_t bytes) {
    if (bytes <= capacity) return;
    auto bigger = std::make_unique_for_overwrite<char[]>(bytes + kPadding);
    if (size > 0) std::memcpy(bigger.get(), data.get(), size);
    data = std::move(bigger);
    capacity = bytes;
  }
};

// A pipe as a sequence of chunks of whole lines, read by one thread at a time.
class ChunkReader {
 public:
  ChunkReader(int fd, std::string source, std::size_t chunk_bytes)
      : fd_(fd), source_(std::move(source)), chunk_bytes_(chunk_bytes) {}

  // Fills `c` with the next chunk; false when the file is exhausted.
  bool next(Chunk& c) {
    if (eof_ && carry_.empty()) return false;
    c.size = 0;
    c.reserve(carry_.size() + chunk_bytes_);
    // An empty carry has no buffer: memcpy from null is undefined even for 0 bytes.
    if (!carry_.empty()) std::memcpy(c.data.get(), carry_.data(), carry_.size());
    c.size = carry_.size();
    carry_.clear();
    c.at_file_start = at_start_;
    at_start_ = false;
    for (;;) {
      fill(c);
      const void* nl = eof_ ? nullptr : ::memrchr(c.data.get(), '\n', c.size);
      if (eof_ || nl != nullptr) {
        const std::size_t end =
            eof_ ? c.size
                 : static_cast<std::size_t>(static_cast<const char*>(nl) - c.data.get()) + 1;
        carry_.assign(c.data.get() + end, c.data.get() + c.size);
        c.size = end;
        c.final = eof_;
        std::memset(c.data.get() + c.size, ' ', kPadding);  // simdjson may read it
        return c.size > 0 || c.at_file_start;
      }
      // A line longer than the chunk (the carry began at a line start): this chunk's first.
      if (c.size > max_line_bytes()) throw line_too_long(source_, 1);
      c.reserve(c.capacity * 2);
    }
  }

  std::uint64_t bytes_read() const noexcept { return read_; }

 private:
  void fill(Chunk& c) {
    while (!eof_ && c.size < c.capacity) {
      const ssize_t n = ::read(fd_, c.data.get() + c.size, c.capacity - c.size);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw Error(source_, 0, std::string("cannot read trace file: ") + std::strerror(errno));
      }
      if (n == 0) eof_ = true;
      c.size += static_cast<std::size_t>(n);
      read_ += static_cast<std::uint64_t>(n);
    }
  }

  int fd_;
  std::string source_;
  std::size_t chunk_bytes_;
  std::vector<char> carry_;  // the start of a line cut by the previous chunk's end
  std::uint64_t read_ = 0;
  bool eof_ = false;
  bool at_start_ = true;
};

// Reads up to `n` bytes at `offset` into `out`; fewer only at the end of the file.
std::size_t read_at(int fd, const std::string& source, char* out, std::size_t n,
                    std::uint64_t offset) {
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd, out + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0) {
      if (errno == EINTR) continue;
      throw Error(source, 0, std::string("cannot read trace file: ") + std::strerror(errno));
    }
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  return got;
}

// Before a chunk grows for a line longer than the chunk: false when that line, the chunk's last,
// runs past max_line_bytes(). The chunk then ends before it, with the line's error kept for
// after its whole lines (an earlier line's error comes first), numbered from its first line.
bool line_fits(Chunk& c, const std::string& source) {
  const char* data = c.data.get();
  const void* nl = ::memrchr(data, '\n', c.size);
  const std::size_t line_start =
      nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - data) + 1 : 0;
  if (c.size - line_start <= max_line_bytes()) return true;
  const auto before = static_cast<std::uint64_t>(std::count(data, data + line_start, '\n'));
  c.size = line_start;
  c.after_lines = line_too_long(source, before + 1);
  return false;
}

// Fills a positional chunk, on the thread that took it, with the lines that start in [begin, end)
// of the file, each whole: the chunk starts after the first '\n' at or after begin - 1 (at 0 for
// the first chunk) and runs through the first '\n' at or after end - 1, reading on for a line
// longer than the chunk (the last chunk reads to the end of the file, which may have grown). A
// chunk inside one long line that started before it holds nothing: that line is an earlier chunk's.
void load_range(Chunk& c, const std::string& source) {
  const Chunk::Range r = *c.range;
  c.size = 0;
  c.final = false;
  std::uint64_t start = 0;
  c.reserve(static_cast<std::size_t>(r.end - r.begin) + 4096);
  if (r.begin != 0) {  // find the first line start at or after begin
    // In probes that start small: the chunk is read again from that line start, and a probe of
    // the whole chunk would copy every chunk twice.
    std::uint64_t at = r.begin - 1;
    std::size_t probe = kFirstProbeBytes;
    for (;;) {
      const std::size_t want = std::min(probe, c.capacity);
      const std::size_t got = read_at(r.fd, source, c.data.get(), want, at);
      const void* nl = std::memchr(c.data.get(), '\n', got);
      if (nl != nullptr) {
        start = at + static_cast<std::uint64_t>(static_cast<const char*>(nl) - c.data.get()) + 1;
        break;
      }
      if (got < want && at + got < r.file_size)
        throw shrank_while_read(source, r.file_size, at + got);
      // The file ends inside a line that started before this chunk, or that line runs past
      // the chunk's end (then no line starts in it: stop, or a long line would be read once per
      // chunk it spans).
      if (got < want || (!r.last && at + got >= r.end)) {
        std::memset(c.data.get(), ' ', kPadding);
        return;
      }
      at += got;
      probe *= 2;
    }
    if (start >= r.end && !r.last) {  // no line starts in [begin, end)
      std::memset(c.data.get(), ' ', kPadding);
      return;
    }
  }
  // Read from `start` until a '\n' at or after end - 1 (not for the last chunk) or the file's end.
  const std::uint64_t need = r.end > start ? r.end - 1 - start : 0;  // index of the first candidate
  std::size_t have = 0;
  for (;;) {
    const std::size_t got =
        read_at(r.fd, source, c.data.get() + have, c.capacity - have, start + have);
    const std::size_t searched = have;
    have += got;
    if (!r.last) {
      const std::size_t from = std::max<std::size_t>(searched, static_cast<std::size_t>(need));
      if (from < have) {
        if (const void* nl = std::memchr(c.data.get() + from, '\n', have - from)) {
          c.size = static_cast<std::size_t>(static_cast<const char*>(nl) - c.data.get()) + 1;
          break;
        }
      }
    }
    if (have < c.capacity) {  // the end of the file
      // Short of the size at the start: cut, the chunk's last line would read as malformed.
      if (start + have < r.file_size) throw shrank_while_read(source, r.file_size, start + have);
      c.size = have;
      c.final = true;
      break;
    }
    c.size = have;  // kept by reserve
    if (!line_fits(c, source)) break;
    c.reserve(c.capacity * 2);
  }
  std::memset(c.data.get() + c.size, ' ', kPadding);  // simdjson may read it
}

// A chunk's parse error, its line counted from the chunk's first line, as the whole file counts it.
Error in_file(const Error& e, std::uint64_t first_line) {
  const std::uint64_t line = e.line() == 0 ? 0 : first_line - 1 + e.line();
  return Error(e.kind(), e.path(), line, e.message());
}

// One parallel read. Every thread, the calling one included, runs the same loop: take the next
// chunk in file order (a regular file: the next range, read by the thread itself; a pipe: the
// next lines from the shared reader, one thread at a time), parse it into its recorder with its
// own parser and arena, wait for its turn (every earlier chunk placed), place its events into the
// document assembler, pass the turn on. The events are placed by the thread that parsed them,
// from its own cache, and no thread only waits for others.
class ParallelRead {
 public:
  ParallelRead(int fd, std::string source, std::uint64_t total, const ReadOptions& options)
      : fd_(fd),
        source_(std::move(source)),
        total_(total),
        positional_(total > 0),
        chunk_bytes_(chunk_bytes()),
        options_(options),
        reader_(fd, source_, chunk_bytes_),
        assembler_(source_),
        memory_(source_) {}

  TraceDocument run(unsigned threads) {
    for (unsigned i = 0; i < threads; ++i) arenas_.push_back(std::make_unique<Arena>());
    std::vector<std::thread> others;
    try {
      for (unsigned i = 1; i < threads; ++i)
        others.emplace_back([this, arena = arenas_[i].get()] { work(*arena); });
    } catch (const std::system_error&) {
      // No thread to spare (a thread limit): the read goes on with the threads started, this one
      // at least; the document is the same.
    }
    work(*arenas_[0]);
    for (std::thread& t : others) t.join();
    if (error_) std::rethrow_exception(error_);
    if (options_.progress) options_.progress(positional_ ? done_ : reader_.bytes_read(), total_);
    for (auto& arena : arenas_) assembler_.absorb(std::move(*arena));
    return assembler_.finish();
  }

 private:
  // One thread's loop, until the file is exhausted or the read stopped.
  void work(Arena& arena) noexcept {
    try {
      EventCopier copier(arena);
      std::optional<LineFeeder> feeder;
      Chunk c;
      std::uint64_t turn = 0;
      while (take(c, turn)) {
        parse(c, feeder, copier);
        if (!wait_for(turn)) return;
        place(c);
        pass_turn();
      }
    } catch (...) {
      stop_with(std::current_exception());
    }
  }

  // The next chunk in file order into `c` and its turn; false when there is none (or the read
  // stopped).
  bool take(Chunk& c, std::uint64_t& turn) {
    c.error.reset();
    c.after_lines.reset();
    c.failure = nullptr;
    c.lines = 0;
    if (positional_) {
      std::lock_guard lock(mutex_);
      if (stopped_ || next_begin_ >= total_) return false;
      const std::uint64_t end = std::min<std::uint64_t>(next_begin_ + chunk_bytes_, total_);
      c.range = Chunk::Range{fd_, next_begin_, end, end >= total_, total_};
      c.at_file_start = next_begin_ == 0;
      next_begin_ = end;
      turn = next_turn_taken_++;
      return true;
    }
    // A pipe is read in order, one chunk after the other; a read error is raised at its turn,
    // after the chunks read before it.
    std::lock_guard read_lock(read_mutex_);
    if (reader_done_) return false;
    try {
      if (!reader_.next(c)) {
        reader_done_ = true;
        return false;
      }
    } catch (const Error& e) {
      c.error = e;  // the chunk holds no line
      reader_done_ = true;
    }
    std::lock_guard lock(mutex_);
    if (stopped_) return false;
    turn = next_turn_taken_++;
    return true;
  }

  // A read error (the pipe's in take(), a range's here) leaves the chunk without events; it is
  // raised at the chunk's turn, as in file order.
  void parse(Chunk& c, std::optional<LineFeeder>& feeder, EventCopier& copier) {
    if (!c.error && c.range) {
      try {
        load_range(c, source_);
      } catch (const Error& e) {
        c.error = e;
      }
    }
    if (c.error) {
      c.events.start(c.data.get(), 0, copier);
      return;
    }
    c.events.start(c.data.get(), c.size, copier);
    if (feeder)
      feeder->restart(c.events, c.at_file_start);
    else
      feeder.emplace(source_, c.events, c.at_file_start);
    try {
      feeder->feed(c.data.get(), c.size, c.final);
      c.lines = feeder->lines();
      if (c.after_lines) c.error = std::move(c.after_lines);
      return;
    } catch (const Error& e) {
      c.error = e;
    } catch (...) {
      c.failure = std::current_exception();
    }
    feeder.reset();  // a parser that threw starts afresh on the next chunk
  }

  // Waits until every chunk before `turn` is placed; false when the read stopped instead. While
  // it waits, the thread maps the document's next pages for the placing, which would otherwise
  // take those page faults (and the kernel's zeroing of each page) inside its turn.
  bool wait_for(std::uint64_t turn) {
    std::unique_lock lock(mutex_);
    while (!stopped_ && turn_ != turn) {
      lock.unlock();
      const bool mapped = prefaulter_.populate_one();
      lock.lock();
      if (!mapped) turn_passed_.wait(lock, [&] { return stopped_ || turn_ == turn; });
    }
    return !stopped_;
  }

  void pass_turn() {
    {
      std::lock_guard lock(mutex_);
      ++turn_;
    }
    turn_passed_.notify_all();
  }

  void stop_with(std::exception_ptr e) noexcept {
    {
      std::lock_guard lock(mutex_);
      if (!error_) error_ = std::move(e);
      stopped_ = true;
    }
    turn_passed_.notify_all();
  }

  // The chunk's events into the document, then its error (the first in file order: every chunk
  // before it was placed without one). Only the thread holding the turn is here.
  void place(Chunk& c) {
    c.events.replay(assembler_.owned_events(), first_line_);
    if (c.error) throw in_file(*c.error, first_line_);
    if (c.failure) std::rethrow_exception(c.failure);
    first_line_ += c.lines;
    done_ += c.size;
    memory_.check(done_);
    // After the first 4 MiB the mix of event kinds is known: size the document for the file.
    if (!reserved_ && done_ >= kReserveAfter && total_ > done_) {
      assembler_.reserve_like_so_far(static_cast<double>(total_) / static_cast<double>(done_),
                                     2.0 * static_cast<double>(total_));
      reserved_ = true;
    }
    if (reserved_) assembler_.prefault_ahead(prefaulter_);
    if (options_.progress && done_ >= next_progress_) {
      options_.progress(done_, total_);
      next_progress_ = done_ + kProgressEvery;
    }
  }

  const int fd_;
  const std::string source_;
  const std::uint64_t total_;
  const bool positional_;  // a regular file, cut by position; else a pipe, read in order
  const std::size_t chunk_bytes_;
  const ReadOptions& options_;

  std::mutex mutex_;  // guards what follows, up to the reader
  std::condition_variable turn_passed_;
  std::uint64_t next_begin_ = 0;       // the next range's start (a regular file)
  std::uint64_t next_turn_taken_ = 0;  // the turn of the next chunk taken
  std::uint64_t turn_ = 0;             // the chunk whose events are placed next
  bool stopped_ = false;
  std::exception_ptr error_;  // the first error in file order, or a thread's own failure

  // The document's next stretches, queued by the thread placing a chunk (once the document is
  // reserved) and mapped by the threads waiting for their turn; thread-safe itself.
  PagePrefaulter prefaulter_{PagePrefaulter::Thread::none};

  std::mutex read_mutex_;  // guards the reader (a pipe)
  ChunkReader reader_;
  bool reader_done_ = false;

  // Touched only by the thread holding the turn.
  DocumentAssembler assembler_;
  MemoryWatch memory_;
  std::uint64_t first_line_ = 1, done_ = 0, next_progress_ = kProgressEvery;
  bool reserved_ = false;

  std::vector<std::unique_ptr<Arena>> arenas_;  // one per thread, filled by it alone
};

}  // namespace

TraceDocument parse_trace_in_parallel(int fd, const std::string& source, std::uint64_t total,
                                      const ReadOptions& options) {
  ParallelRead read(fd, source, total, options);
  return read.run(std::max(1u, options.threads));
}

}  // namespace candle_graph
