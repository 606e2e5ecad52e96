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

#include "output/test_hook.hpp"
#include "trace/document_assembler.hpp"
#include "trace/file_read.hpp"
#include "trace/line_feeder.hpp"
#include "trace/line_parser.hpp"
#include "trace/memory_budget.hpp"
#include "trace/parallel_reader.hpp"
#include "trace/read_sizes.hpp"

namespace candle_graph {
namespace {

using read_sizes::kMaxLineBytes;
using read_sizes::kPadding;
using read_sizes::kProgressEvery;
using read_sizes::kReserveAfter;

constexpr std::size_t kChunk = std::size_t{1} << 20;  // 1 MiB reads: the buffer is in peak RSS

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
#ifdef POSIX_FADV_SEQUENTIAL
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
#endif

  return read_trace_file(fd.get(), source, total, options);
}

Error shrank_while_read(const std::string& source, std::uint64_t size, std::uint64_t end) {
  return Error(ErrorKind::io, source, 0,
               "the file shrank while it was read: it held " + std::to_string(size) +
                   " bytes when the read began, but had ended by byte " + std::to_string(end) +
                   " (is another program still writing it?)");
}

// Read each time (a getenv): it is asked once per buffer growth and per line too long to batch.
std::size_t max_line_bytes() {
  return output::size_from_env("CANDLE_GRAPH_TEST_MAX_LINE_BYTES", kMaxLineBytes);
}

Error line_too_long(const std::string& source, std::uint64_t line) {
  return Error(source, line,
               "the line is longer than " + std::to_string(max_line_bytes()) +
                   " bytes, which no trace/6 event is (is this a trace/6 file?)");
}

TraceDocument read_trace_file(int fd, const std::string& source, std::uint64_t total,
                              const ReadOptions& options) {
  if (options.threads > 1) return parse_trace_in_parallel(fd, source, total, options);

  MemoryWatch memory(source);
  DocumentAssembler assembler(source);
  LineFeeder feeder(source, assembler.events());
  ReadBuffer buf(kChunk);
  std::size_t have = 0;  // bytes of unconsumed data at the front of buf
  std::uint64_t done = 0, next_progress = kProgressEvery;
  bool reserved = false;
  for (;;) {
    if (buf.capacity() - have < kChunk / 2) buf.grow(buf.capacity() * 2, have);
    const ssize_t n = ::read(fd, buf.data() + have, buf.capacity() - have);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(source, 0, std::string("cannot read trace file: ") + std::strerror(errno));
    }
    const bool eof = n == 0;
    // Before the last line is parsed: cut short, it would be reported as malformed instead.
    if (eof && done < total) throw shrank_while_read(source, total, done);
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
    // What is left is the start of a line whose end has not been read yet.
    if (have > max_line_bytes()) throw line_too_long(source, feeder.lines() + 1);
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
  LineFeeder feeder{std::string(source), assembler.events()};
  feeder.feed(buf.data(), text.size(), true);
  return assembler.finish();
}

TraceEvent parse_event_line(std::string_view line, Arena& arena, std::string_view source,
                            std::uint64_t line_number) {
  std::vector<char> buf(line.size() + kPadding);
  std::memcpy(buf.data(), line.data(), line.size());
  const std::string_view trimmed = trim_line(std::string_view(buf.data(), line.size()));
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
