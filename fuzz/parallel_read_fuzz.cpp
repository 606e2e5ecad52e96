// libFuzzer target for reading trace/6 on several threads: whatever the bytes, the read with 2 or
// 3 threads (chunks cut by position, parsed side by side, placed in turns) must end as the
// one-thread read of the same bytes ends: the same document, or the same first error (kind, line,
// message), and health run on threads must find what it finds on one. The reader of bytes in
// memory (parse_trace_text) must end alike as well. The one-thread read of the file is the
// reference here; fuzz_trace_reader checks the reader against the writer and the simdjson path.
//
// Input: a control byte, then the file.
//   bit 0      3 reading threads instead of 2
//   bit 1      the file read through a pipe (in order, one thread at a time) instead of by position
//   bits 3..7  chunk bytes: 1 + 3 × value (1 to 91), or 128 + 64 × value with bit 2 set (128 to
//              2048), or the reader's default for 31
// The line cap is left as it is: the reader measures only lines too long for its batches of
// lines (256 KiB), so a cap lowered below that, as the real one (256 MiB) never is, would let the
// one-thread read take lines that the chunked read refuses.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "candle_graph/error.hpp"
#include "candle_graph/health.hpp"
#include "candle_graph/trace.hpp"
#include "fuzz_support.hpp"

namespace {

using namespace candle_graph;
using candle_graph::fuzz::fail;

struct Outcome {
  std::optional<TraceDocument> doc;
  std::optional<Error> error;
};

Outcome read_path(const std::string& path, unsigned threads) {
  ReadOptions options;
  options.threads = threads;
  try {
    return {parse_trace(path, options), std::nullopt};
  } catch (const Error& e) {
    return {std::nullopt, e};
  }
}

// The file's bytes through a pipe, opened by its /proc path as a user's `<(cmd)` would be. The
// inputs fit the pipe's buffer (libFuzzer's -max_len is 64 KiB; the buffer is raised to 1 MiB),
// so the whole file is written before the read starts.
Outcome read_pipe(std::string_view bytes, unsigned threads) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) fail("cannot create a pipe", "");
  if (bytes.size() > 65536 && ::fcntl(fds[1], F_SETPIPE_SZ, 1 << 20) < 0)
    fail("cannot enlarge the pipe", "");
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fds[1], bytes.data() + done, bytes.size() - done);
    if (n <= 0) fail("cannot fill the pipe", "");
    done += static_cast<std::size_t>(n);
  }
  ::close(fds[1]);
  Outcome out = read_path("/proc/self/fd/" + std::to_string(fds[0]), threads);
  ::close(fds[0]);
  return out;
}

void set_env(const char* name, std::optional<std::size_t> value) {
  if (value)
    ::setenv(name, std::to_string(*value).c_str(), 1);
  else
    ::unsetenv(name);
}

std::string describe(const Outcome& o) {
  if (o.doc) return "a document";
  return std::string(to_string(o.error->kind())) + " at line " + std::to_string(o.error->line()) +
         ": " + o.error->message();
}

void check_same_health(const TraceDocument& doc, unsigned threads) {
  const TraceHealth one = analyze_health(doc);
  const TraceHealth many = analyze_health(doc, threads);
  if (one.trusted != many.trusted || one.issues != many.issues || one.coverage != many.coverage)
    fail("health on threads differs from health on one",
         one.error_summary() + "\n" + many.error_summary());
}

Outcome read_text(std::string_view text, const std::string& source) {
  try {
    return {parse_trace_text(text, source), std::nullopt};
  } catch (const Error& e) {
    return {std::nullopt, e};
  }
}

// `other` must end as `reference` (the one-thread read of the file) ends: an equal document, or
// an error of the same kind, line and message, naming the same file when `same_name` (a pipe is
// read under a name of its own).
void check_same(const Outcome& reference, const Outcome& other, const std::string& what,
                bool same_name) {
  const std::string both =
      "one thread: " + describe(reference) + "\n" + what + ": " + describe(other);
  if (reference.doc.has_value() != other.doc.has_value())
    fail("one read ended in a document, the other in an error", both);
  if (reference.doc) {
    if (!(*reference.doc == *other.doc)) fail("the documents differ", both);
    return;
  }
  const Error& a = *reference.error;
  const Error& b = *other.error;
  if (!fuzz::same_error(a, b)) fail("the reads failed differently", both);
  if (same_name && a.path() != b.path()) fail("the errors name different files", both);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto [control, text] = candle_graph::fuzz::split_control(data, size);
  const unsigned threads = (control & 1) ? 3 : 2;
  const bool through_pipe = (control & 2) != 0;
  const std::size_t chunk_code = control >> 3;
  const std::size_t chunk_bytes = (control & 4) ? 128 + 64 * chunk_code : 1 + 3 * chunk_code;

  const std::string path = candle_graph::fuzz::write_scratch("trace.jsonl", text).string();
  set_env("CANDLE_GRAPH_TEST_CHUNK_BYTES", std::nullopt);
  const Outcome reference = read_path(path, 1);
  set_env("CANDLE_GRAPH_TEST_CHUNK_BYTES",
          chunk_code == 31 ? std::nullopt : std::optional<std::size_t>(chunk_bytes));
  const Outcome parallel = through_pipe ? read_pipe(text, threads) : read_path(path, threads);

  check_same(reference, parallel, std::to_string(threads) + " threads", !through_pipe);
  if (reference.doc) check_same_health(*reference.doc, threads);
  // The reader of bytes in memory (parse_trace_text, under the file's name) ends alike too.
  check_same(reference, read_text(text, path), "the bytes in memory", true);
  return 0;
}
