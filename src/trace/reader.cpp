// trace6.md §5.1 parse_trace: stream the file through a fixed-size buffer (peak memory is the
// document, not the file) and feed the assembler one event per non-blank line. A line in exactly
// the form our writer emits goes through FastLineScanner (no simdjson); runs of other lines are
// parsed in batches of up to 256 KiB with simdjson On-Demand's iterate_many (one stage 1 per
// batch); any irregular line, and every line longer than a batch, goes through the exact per-line
// path (split, trim, one iterate per line), which is what produces error messages. The scanner only
// takes lines that path accepts, with the same event, so results and messages do not depend on
// which path read a line. A line longer than the buffer grows it; nothing else does.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "trace/document_assembler.hpp"
#include "trace/fast_line_scanner.hpp"
#include "trace/line_parser.hpp"
#include "trace/memory_budget.hpp"

namespace candle_graph {
namespace {

constexpr std::size_t kPadding = 64;                  // simdjson::SIMDJSON_PADDING
constexpr std::size_t kChunk = std::size_t{1} << 20;  // 1 MiB reads: the buffer is in peak RSS
constexpr std::size_t kReserveAfter = std::size_t{4} << 20;  // sample of the kind mix (below)
constexpr std::uint64_t kProgressEvery = 64ull << 20;        // report every 64 MiB

bool is_ascii_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && is_ascii_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ascii_space(s.back())) s.remove_suffix(1);
  return s;
}

// Splits `data` into lines and feeds non-empty ones to the parser and assembler. Returns the
// number of bytes consumed (complete lines only unless `final`).
class LineFeeder {
 public:
  LineFeeder(std::string source, DocumentAssembler& assembler)
      : source_(std::move(source)), assembler_(assembler) {}

  // `data` must be followed by at least kPadding readable bytes.
  std::size_t feed(const char* data, std::size_t size, bool final) {
    std::size_t pos = 0;
    if (first_) {
      first_ = false;
      if (size >= 3 && std::memcmp(data, "\xEF\xBB\xBF", 3) == 0) pos = 3;  // UTF-8 BOM
    }
    while (pos < size) {
      // Whole lines, up to kBatchBytes, go through one batched stage 1; a line longer than
      // that, and whatever the batch stopped at, go line by line.
      const std::size_t window = std::min(LineParser::kBatchBytes, size - pos);
      const void* last_nl = ::memrchr(data + pos, '\n', window);
      if (last_nl == nullptr) {
        const std::size_t next = feed_lines(data, pos, pos + 1, size, final);
        if (next == pos) break;  // an incomplete line: wait for more data
        pos = next;
        continue;
      }
      const std::size_t region_end =
          static_cast<std::size_t>(static_cast<const char*>(last_nl) - data) + 1;
      feed_region(data, pos, region_end, size, final);
      pos = region_end;
    }
    return pos;
  }

 private:
  // The whole lines [pos, region_end): canonical lines through the fast scanner, every run of
  // other lines (blank ones aside) through the exact simdjson paths, all in stream order.
  void feed_region(const char* data, std::size_t pos, std::size_t region_end, std::size_t size,
                   bool final) {
    std::size_t pending = pos;  // start of the run of lines not handled yet
    while (pos < region_end) {
      const FastLineScanner::Result r = scanner_.scan(data + pos);
      if (r.kind == FastLineScanner::Kind::none) {
        const void* nl = std::memchr(data + pos, '\n', region_end - pos);
        pos = static_cast<std::size_t>(static_cast<const char*>(nl) - data) + 1;
        continue;
      }
      if (pending < pos) feed_slow(data, pending, pos, size, final);
      add_scanned(r.kind, ++line_);
      pos = pending = static_cast<std::size_t>(r.next - data);
    }
    if (pending < region_end) feed_slow(data, pending, region_end, size, final);
  }

  // Whole lines [pos, end) with simdjson: one batched stage 1, the per-line path from wherever
  // the batch stopped.
  void feed_slow(const char* data, std::size_t pos, std::size_t end, std::size_t size, bool final) {
    const auto r = parser_.parse_batch(data + pos, end - pos, line_, source_, assembler_);
    pos += r.consumed;
    line_ += r.lines;
    if (pos < end) feed_lines(data, pos, end, size, final);
  }

  void add_scanned(FastLineScanner::Kind kind, std::uint64_t line) {
    using K = FastLineScanner::Kind;
    switch (kind) {
      case K::span_start:
        return assembler_.add_span_start(scanner_.span_start(), line);
      case K::span_end:
        return assembler_.add_span_end(scanner_.span_end(), line);
      case K::op:
        return assembler_.add_op(scanner_.op(), line);
      case K::tensor:
        return assembler_.add_tensor(scanner_.tensor(), line);
      case K::memory:
        return assembler_.add_memory(scanner_.memory(), line);
      case K::device_memory:
        return assembler_.add_device_memory(scanner_.device_memory(), line);
      case K::gradient:
        return assembler_.add_gradient(scanner_.gradient(), line);
      case K::edge:
        return assembler_.add_edge(scanner_.edge(), line);
      case K::none:
        return;
    }
  }

  // Parses the lines that start in [pos, limit) one by one; returns where it stopped (a line
  // start: `limit` or later, or `pos` of an incomplete last line when not `final`).
  std::size_t feed_lines(const char* data, std::size_t pos, std::size_t limit, std::size_t size,
                         bool final) {
    while (pos < limit) {
      const void* nl = std::memchr(data + pos, '\n', size - pos);
      if (nl == nullptr && !final) break;
      const std::size_t end =
          nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - data) : size;
      ++line_;
      const std::string_view line = trim(std::string_view(data + pos, end - pos));
      if (!line.empty()) {
        const std::size_t capacity = static_cast<std::size_t>(data + size - line.data()) + kPadding;
        const TraceEvent& e = parser_.parse(line, capacity, source_, line_);
        assembler_.add(e, line_);
      }
      pos = nl ? end + 1 : size;
    }
    return pos;
  }

  std::string source_;
  DocumentAssembler& assembler_;
  LineParser parser_;
  FastLineScanner scanner_;
  std::uint64_t line_ = 0;
  bool first_ = true;
};

// The read buffer, left uninitialised: zero-filling 4 MiB that read() overwrites anyway was 3%
// of the reader's instructions on a 5 MB trace. Only the padding after the data is set.
class ReadBuffer {
 public:
  explicit ReadBuffer(std::size_t capacity)
      : data_(std::make_unique_for_overwrite<char[]>(capacity + kPadding)), capacity_(capacity) {}
  char* data() noexcept { return data_.get(); }
  std::size_t capacity() const noexcept { return capacity_; }  // excluding the padding
  // Grows to `capacity`, keeping the first `keep` bytes.
  void grow(std::size_t capacity, std::size_t keep) {
    auto bigger = std::make_unique_for_overwrite<char[]>(capacity + kPadding);
    std::memcpy(bigger.get(), data_.get(), keep);
    data_ = std::move(bigger);
    capacity_ = capacity;
  }
  // simdjson may read (never use) the padding; keep it defined for memory checkers.
  void pad_after(std::size_t size) noexcept { std::memset(data_.get() + size, ' ', kPadding); }

 private:
  std::unique_ptr<char[]> data_;
  std::size_t capacity_;
};

class FileHandle {
 public:
  explicit FileHandle(int fd) : fd_(fd) {}
  ~FileHandle() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

TraceDocument parse_trace(const std::filesystem::path& path, const ReadOptions& options) {
  const std::string source = path.string();
  FileHandle fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0)
    throw Error(source, 0, std::string("cannot open trace file: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) == 0 && S_ISDIR(st.st_mode))
    throw Error(source, 0, "is a directory, not a trace file");
  const std::uint64_t total = S_ISREG(st.st_mode) ? static_cast<std::uint64_t>(st.st_size) : 0;
  check_memory_budget(source, total, kTrace6BytesPerInputByte);
  MemoryWatch memory(source);
#ifdef POSIX_FADV_SEQUENTIAL
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
#endif

  DocumentAssembler assembler(source);
  LineFeeder feeder(source, assembler);
  ReadBuffer buf(kChunk);
  std::size_t have = 0;  // bytes of unconsumed data at the front of buf
  std::uint64_t done = 0, next_progress = kProgressEvery;
  bool reserved = false;
  for (;;) {
    if (buf.capacity() - have < kChunk / 2) buf.grow(buf.capacity() * 2, have);
    const ssize_t n = ::read(fd.get(), buf.data() + have, buf.capacity() - have);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(source, 0, std::string("cannot read trace file: ") + std::strerror(errno));
    }
    const bool eof = n == 0;
    have += static_cast<std::size_t>(n);
    done += static_cast<std::uint64_t>(n);
    buf.pad_after(have);
    const std::size_t used = feeder.feed(buf.data(), have, eof);
    memory.check(done);
    // After the first 4 MiB the mix of event kinds is known: size the document for the file.
    if (!reserved && done >= kReserveAfter && total > done) {
      assembler.reserve_like_so_far(static_cast<double>(total) / static_cast<double>(done),
                                    2.0 * static_cast<double>(total));
      reserved = true;
    }
    std::memmove(buf.data(), buf.data() + used, have - used);
    have -= used;
    if (options.progress && done >= next_progress) {
      options.progress(done, total);
      next_progress = done + kProgressEvery;
    }
    if (eof) break;
  }
  if (options.progress) options.progress(done, total);
  return assembler.finish();
}

TraceDocument parse_trace_text(std::string_view text, std::string_view source) {
  std::vector<char> buf(text.size() + kPadding);
  std::memcpy(buf.data(), text.data(), text.size());
  DocumentAssembler assembler{std::string(source)};
  LineFeeder feeder{std::string(source), assembler};
  feeder.feed(buf.data(), text.size(), true);
  return assembler.finish();
}

TraceEvent parse_event_line(std::string_view line, Arena& arena, std::string_view source,
                            std::uint64_t line_number) {
  std::vector<char> buf(line.size() + kPadding);
  std::memcpy(buf.data(), line.data(), line.size());
  const std::string_view trimmed = trim(std::string_view(buf.data(), line.size()));
  if (trimmed.empty()) throw Error(std::string(source), line_number, "empty line: no event");
  LineParser parser;
  TraceEvent e =
      parser.parse(trimmed, buf.size() - static_cast<std::size_t>(trimmed.data() - buf.data()),
                   source, line_number);
  // Move every view into the caller's arena before the parser and buffer go away.
  auto ids = [&](std::span<const std::string_view> v) {
    std::vector<std::string_view> owned;
    for (auto s : v) owned.push_back(arena.copy(s));
    return arena.copy(std::span<const std::string_view>(owned));
  };
  auto opt = [&](std::optional<std::string_view> s) {
    return s ? std::optional<std::string_view>(arena.copy(*s)) : std::nullopt;
  };
  std::visit(
      [&](auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, MetaEvent>) {
          x.schema = arena.copy(x.schema);
          auto& r = x.run;
          r.run_id = arena.copy(r.run_id);
          r.correlation_id = arena.copy(r.correlation_id);
          r.entrypoint = arena.copy(r.entrypoint);
          r.timestamp = arena.copy(r.timestamp);
          r.device = arena.copy(r.device);
          r.candle_version = opt(r.candle_version);
          std::vector<Tag> tags;
          for (const Tag& t : r.tags) tags.push_back({arena.copy(t.key), arena.copy(t.value)});
          r.tags = arena.copy(std::span<const Tag>(tags));
        } else if constexpr (std::is_same_v<T, SpanStartEvent>) {
          x.id = arena.copy(x.id);
          x.parent_id = opt(x.parent_id);
          x.name = arena.copy(x.name);
        } else if constexpr (std::is_same_v<T, SpanEndEvent>) {
          x.id = arena.copy(x.id);
        } else if constexpr (std::is_same_v<T, OpEvent>) {
          x.span_id = arena.copy(x.span_id);
          x.op_name = arena.copy(x.op_name);
          x.inputs = ids(x.inputs);
          x.output = opt(x.output);
          x.shape = arena.copy(x.shape);
          x.dtype = arena.copy(x.dtype);
          x.device = arena.copy(x.device);
        } else if constexpr (std::is_same_v<T, TensorEvent>) {
          x.span_id = arena.copy(x.span_id);
          x.tensor_id = arena.copy(x.tensor_id);
          x.shape = arena.copy(x.shape);
          x.dtype = arena.copy(x.dtype);
          x.device = arena.copy(x.device);
        } else if constexpr (std::is_same_v<T, MemoryEvent>) {
          x.tensor_id = arena.copy(x.tensor_id);
          x.span_id = arena.copy(x.span_id);
          x.op_name = opt(x.op_name);
          x.device = arena.copy(x.device);
          x.shape = arena.copy(x.shape);
          x.dtype = arena.copy(x.dtype);
        } else if constexpr (std::is_same_v<T, DeviceMemoryEvent>) {
          x.device = arena.copy(x.device);
        } else if constexpr (std::is_same_v<T, GradientEvent>) {
          x.event_id = arena.copy(x.event_id);
          x.root = arena.copy(x.root);
          x.key = arena.copy(x.key);
        } else {
          x.from_span = arena.copy(x.from_span);
          x.to_span = arena.copy(x.to_span);
        }
      },
      e);
  return e;
}

}  // namespace candle_graph
