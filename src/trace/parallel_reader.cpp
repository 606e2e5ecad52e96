// The pipeline: at most one chunk per worker plus the one being replayed are in flight (read,
// queued, parsed or waiting for the replay), which bounds the memory the threads add: per chunk,
// its 1 MiB of text and the events recorded from it (about as much again; 11 MB in all for two
// workers on a 295 MB synth trace). A chunk holds whole lines only, so a worker's line numbers
// count from the chunk's first line; the replay shifts them by the lines of the chunks before. A
// parse error stops its chunk and is raised only when the replay reaches it, after the events
// before it: whichever comes first in the file, an assembler error (replay) or a parse error
// (worker), is the one raised, as in the single-threaded read.
#include "trace/parallel_reader.hpp"
#include "trace/read_sizes.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "output/test_hook.hpp"
#include "trace/chunk_recorder.hpp"
#include "trace/document_assembler.hpp"
#include "trace/line_feeder.hpp"
#include "trace/memory_budget.hpp"
#include "trace/page_prefaulter.hpp"

namespace candle_graph {
namespace {

using read_sizes::kPadding;
using read_sizes::kProgressEvery;
using read_sizes::kReserveAfter;

constexpr std::size_t kChunkBytes = std::size_t{1} << 20;  // per chunk; in peak RSS per worker
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
  // A regular file is read by the workers themselves (pread): the chunk is the lines that start
  // in [begin, end) of the file, `last` when end is the file's size (read on to the end).
  struct Range {
    int fd = -1;
    std::uint64_t begin = 0, end = 0;
    bool last = false;
  };
  std::optional<Range> range;
  // What the worker made of it.
  ChunkRecorder events;
  std::uint64_t lines = 0;
  std::optional<Error> error;
  std::exception_ptr failure;  // anything but an Error (out of memory)
  bool parsed = false;

  void reserve(std::size_t bytes) {
    if (bytes <= capacity) return;
    auto bigger = std::make_unique_for_overwrite<char[]>(bytes + kPadding);
    if (size > 0) std::memcpy(bigger.get(), data.get(), size);
    data = std::move(bigger);
    capacity = bytes;
  }
};

// The main thread's side: the file as a sequence of chunks of whole lines.
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
      c.reserve(c.capacity * 2);  // a line longer than the chunk
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

// Fills a positional chunk on a worker with the lines that start in [begin, end) of the file,
// each whole: the chunk starts after the first '\n' at or after begin - 1 (at 0 for the first
// chunk) and runs through the first '\n' at or after end - 1, reading on for a line longer than
// the chunk (the last chunk reads to the end of the file, which may have grown). A chunk inside
// one long line that started before it holds nothing: that line is an earlier chunk's.
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
      c.size = have;
      c.final = true;
      break;
    }
    c.size = have;  // kept by reserve
    c.reserve(c.capacity * 2);
  }
  std::memset(c.data.get() + c.size, ' ', kPadding);  // simdjson may read it
}

// The workers: each parses whole chunks with its own parser and scanner, and copies what it
// parsed into an arena of its own, which the document takes over at the end.
class ParsePool {
 public:
  ParsePool(unsigned threads, std::string source) : source_(std::move(source)) {
    for (unsigned i = 0; i < threads; ++i) arenas_.push_back(std::make_unique<Arena>());
    for (unsigned i = 0; i < threads; ++i)
      threads_.emplace_back([this, arena = arenas_[i].get()] { work(*arena); });
  }
  ~ParsePool() { stop(); }
  ParsePool(const ParsePool&) = delete;
  ParsePool& operator=(const ParsePool&) = delete;

  void submit(Chunk& c) {
    c.parsed = false;
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(&c);
    }
    work_ready_.notify_one();
  }

  void wait(const Chunk& c) {
    std::unique_lock lock(mutex_);
    chunk_parsed_.wait(lock, [&] { return c.parsed; });
  }

  // Stops the workers (after the chunk each is parsing) and waits for them.
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    work_ready_.notify_all();
    for (std::thread& t : threads_)
      if (t.joinable()) t.join();
  }

  // After stop(): the copies of every event the workers parsed become the document's.
  void give_copies_to(DocumentAssembler& assembler) {
    for (auto& arena : arenas_) assembler.absorb(std::move(*arena));
  }

 private:
  void work(Arena& arena) {
    EventCopier copier(arena);
    std::optional<LineFeeder> feeder;
    for (;;) {
      Chunk* c = nullptr;
      {
        std::unique_lock lock(mutex_);
        work_ready_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (stop_) return;
        c = queue_.front();
        queue_.pop_front();
      }
      parse(*c, feeder, copier);
      {
        std::lock_guard lock(mutex_);
        c->parsed = true;
      }
      chunk_parsed_.notify_all();
    }
  }

  void parse(Chunk& c, std::optional<LineFeeder>& feeder, EventCopier& copier) {
    c.error.reset();
    c.failure = nullptr;
    c.lines = 0;
    if (c.range) {
      try {
        load_range(c, source_);
      } catch (const Error& e) {  // raised when the replay reaches this chunk, as in file order
        c.events.start(c.data.get(), 0, copier);
        c.error = e;
        return;
      }
    }
    c.events.start(c.data.get(), c.size, copier);
    if (feeder)
      feeder->restart(c.events, c.at_file_start);
    else
      feeder.emplace(source_, c.events, c.at_file_start);
    try {
      feeder->feed(c.data.get(), c.size, c.final);
      c.lines = feeder->lines();
      return;
    } catch (const Error& e) {
      c.error = e;
    } catch (...) {
      c.failure = std::current_exception();
    }
    feeder.reset();  // a parser that threw starts afresh on the next chunk
  }

  std::string source_;
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable chunk_parsed_;
  std::deque<Chunk*> queue_;
  bool stop_ = false;
  std::vector<std::unique_ptr<Arena>> arenas_;  // one per worker, filled by it alone
  std::vector<std::thread> threads_;
};

// A worker's error, its line counted from the chunk's first line, as the whole file counts it.
Error in_file(const Error& e, std::uint64_t first_line) {
  const std::uint64_t line = e.line() == 0 ? 0 : first_line - 1 + e.line();
  return Error(e.kind(), e.path(), line, e.message());
}

}  // namespace

TraceDocument parse_trace_in_parallel(int fd, const std::string& source, std::uint64_t total,
                                      const ReadOptions& options) {
  const unsigned threads = std::max(1u, options.threads);
  const std::size_t max_in_flight = std::size_t{threads} + 1;
  DocumentAssembler assembler(source);
  const std::size_t chunk = chunk_bytes();
  ChunkReader reader(fd, source, chunk);
  // A regular file is cut by position and each worker reads its own chunk, so that the main
  // thread (the bound: it replays every event) does not also copy the file in; anything else
  // (a pipe) is read in order by the main thread.
  const bool positional = total > 0;
  std::uint64_t next_begin = 0;
  // Declared before the pool: the pool joins its workers before the chunks they use go away.
  std::deque<std::unique_ptr<Chunk>> in_flight, spare;
  std::optional<Error> read_error;  // raised after the chunks read before it, as in file order
  ParsePool pool(threads, source);
  bool more = true;
  std::uint64_t first_line = 1, done = 0, next_progress = kProgressEvery;
  bool reserved = false;
  MemoryWatch memory(source);
  std::optional<PagePrefaulter> prefaulter;
  for (;;) {
    while (more && in_flight.size() < max_in_flight) {
      std::unique_ptr<Chunk> c;
      if (spare.empty()) {
        c = std::make_unique<Chunk>();
      } else {
        c = std::move(spare.back());
        spare.pop_back();
      }
      if (positional) {
        more = next_begin < total;
        if (!more) break;
        const std::uint64_t end = std::min<std::uint64_t>(next_begin + chunk, total);
        c->range = Chunk::Range{fd, next_begin, end, end >= total};
        c->at_file_start = next_begin == 0;
        next_begin = end;
      } else {
        try {
          more = reader.next(*c);
        } catch (const Error& e) {
          read_error = e;
          more = false;
        }
        if (!more) break;
      }
      pool.submit(*c);
      in_flight.push_back(std::move(c));
    }
    if (in_flight.empty()) break;
    std::unique_ptr<Chunk> c = std::move(in_flight.front());
    in_flight.pop_front();
    pool.wait(*c);
    c->events.replay(assembler.owned_events(), first_line);
    if (c->error) throw in_file(*c->error, first_line);
    if (c->failure) std::rethrow_exception(c->failure);
    first_line += c->lines;
    done += c->size;
    memory.check(done);
    // After the first 4 MiB the mix of event kinds is known: size the document for the file.
    if (!reserved && done >= kReserveAfter && total > done) {
      assembler.reserve_like_so_far(static_cast<double>(total) / static_cast<double>(done),
                                    2.0 * static_cast<double>(total));
      reserved = true;
      prefaulter.emplace();
    }
    if (prefaulter) assembler.prefault_ahead(*prefaulter);
    if (options.progress && done >= next_progress) {
      options.progress(done, total);
      next_progress = done + kProgressEvery;
    }
    spare.push_back(std::move(c));
  }
  if (read_error) throw *read_error;
  if (options.progress) options.progress(positional ? done : reader.bytes_read(), total);
  pool.stop();
  pool.give_copies_to(assembler);
  prefaulter.reset();  // no stretch is mapped after finish() gives back what was mapped ahead
  return assembler.finish();
}

}  // namespace candle_graph
