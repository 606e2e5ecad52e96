// The pipeline: at most one chunk per worker plus the one being replayed are in flight (read,
// queued, parsed or waiting for the replay), which bounds the memory the threads add: per chunk,
// its 1 MiB of text and the events recorded from it (about as much again; 11 MB in all for two
// workers on a 295 MB synth trace). A chunk holds whole lines only, so a worker's line numbers
// count from the chunk's first line; the replay shifts them by the lines of the chunks before. A
// parse error stops its chunk and is raised only when the replay reaches it, after the events
// before it: whichever comes first in the file, an assembler error (replay) or a parse error
// (worker), is the one raised, as in the single-threaded read.
#include "trace/parallel_reader.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "trace/chunk_recorder.hpp"
#include "trace/document_assembler.hpp"
#include "trace/line_feeder.hpp"
#include "trace/memory_budget.hpp"

namespace candle_graph {
namespace {

constexpr std::size_t kPadding = 64;                         // simdjson::SIMDJSON_PADDING
constexpr std::size_t kChunkBytes = std::size_t{1} << 20;    // per chunk; in peak RSS per worker
constexpr std::size_t kReserveAfter = std::size_t{4} << 20;  // sample of the kind mix
constexpr std::uint64_t kProgressEvery = 64ull << 20;

// Tests force tiny chunks so that chunk boundaries fall at every place in their fixtures.
std::size_t chunk_bytes() {
  const char* text = std::getenv("CANDLE_GRAPH_TEST_CHUNK_BYTES");
  std::size_t n = 0;
  if (text != nullptr && std::from_chars(text, text + std::strlen(text), n).ec == std::errc() &&
      n > 0)
    return n;
  return kChunkBytes;
}

struct Chunk {
  std::unique_ptr<char[]> data;
  std::size_t capacity = 0;  // excluding the padding
  std::size_t size = 0;
  bool at_file_start = false;
  bool final = false;  // the end of the file: its last line may lack a '\n'
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

// The workers: each parses whole chunks with its own parser and scanner.
class ParsePool {
 public:
  ParsePool(unsigned threads, std::string source) : source_(std::move(source)) {
    for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
  }
  ~ParsePool() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    work_ready_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
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

 private:
  void work() {
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
      parse(*c, feeder);
      {
        std::lock_guard lock(mutex_);
        c->parsed = true;
      }
      chunk_parsed_.notify_all();
    }
  }

  void parse(Chunk& c, std::optional<LineFeeder>& feeder) {
    c.events.start(c.data.get(), c.size);
    c.error.reset();
    c.failure = nullptr;
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
  ChunkReader reader(fd, source, chunk_bytes());
  // Declared before the pool: the pool joins its workers before the chunks they use go away.
  std::deque<std::unique_ptr<Chunk>> in_flight, spare;
  std::optional<Error> read_error;  // raised after the chunks read before it, as in file order
  ParsePool pool(threads, source);
  bool more = true;
  std::uint64_t first_line = 1, done = 0, next_progress = kProgressEvery;
  bool reserved = false;
  MemoryWatch memory(source);
  for (;;) {
    while (more && in_flight.size() < max_in_flight) {
      std::unique_ptr<Chunk> c;
      if (spare.empty()) {
        c = std::make_unique<Chunk>();
      } else {
        c = std::move(spare.back());
        spare.pop_back();
      }
      try {
        more = reader.next(*c);
      } catch (const Error& e) {
        read_error = e;
        more = false;
      }
      if (!more) break;
      pool.submit(*c);
      in_flight.push_back(std::move(c));
    }
    if (in_flight.empty()) break;
    std::unique_ptr<Chunk> c = std::move(in_flight.front());
    in_flight.pop_front();
    pool.wait(*c);
    c->events.replay(assembler, first_line);
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
    }
    if (options.progress && done >= next_progress) {
      options.progress(done, total);
      next_progress = done + kProgressEvery;
    }
    spare.push_back(std::move(c));
  }
  if (read_error) throw *read_error;
  if (options.progress) options.progress(reader.bytes_read(), total);
  return assembler.finish();
}

}  // namespace candle_graph
