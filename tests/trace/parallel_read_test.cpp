// Reading with several threads (ReadOptions::threads > 1) must give what the single-threaded read
// gives, byte for byte: the same document (compared as the canonical JSONL the writer makes of
// it) or the same first error (kind, file, line and message). The single-threaded read is the
// reference: its own tests (reader_*_test.cpp) check it against independent expectations. Chunk
// sizes down to one byte are forced through CANDLE_GRAPH_TEST_CHUNK_BYTES so that chunk
// boundaries fall everywhere, inside lines, in blank lines and in documents spread over lines.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <optional>
#include <thread>

#include "support/files.hpp"
#include "support/run_program.hpp"
#include "support/sanitizers.hpp"
#include "support/scoped_env.hpp"
#include "support/trace_lines.hpp"
#include "trace/file_read.hpp"

namespace {

using namespace cgtest;
using candle_graph::Error;
using candle_graph::ReadOptions;
using candle_graph::testing::run_cli;

// "ok" and the document as JSONL, or "error" and what the error says.
std::string outcome(const fs::path& file, unsigned threads, std::size_t chunk_bytes = 0) {
  if (chunk_bytes > 0)
    ::setenv("CANDLE_GRAPH_TEST_CHUNK_BYTES", std::to_string(chunk_bytes).c_str(), 1);
  else
    ::unsetenv("CANDLE_GRAPH_TEST_CHUNK_BYTES");
  ReadOptions options;
  options.threads = threads;
  std::string result;
  try {
    result = "ok\n" + candle_graph::write_jsonl_string(candle_graph::parse_trace(file, options));
  } catch (const Error& e) {
    result = "error " + std::string(candle_graph::to_string(e.kind())) + " " + e.what();
  }
  ::unsetenv("CANDLE_GRAPH_TEST_CHUNK_BYTES");
  return result;
}

// Every thread count and chunk size the tests try against the single-threaded read.
void expect_same_as_one_thread(const fs::path& file, std::initializer_list<std::size_t> chunks) {
  const std::string reference = outcome(file, 1);
  EXPECT_EQ(outcome(file, 2), reference) << file << ", 2 threads";
  for (std::size_t chunk : chunks) {
    EXPECT_EQ(outcome(file, 2, chunk), reference) << file << ", 2 threads, chunks of " << chunk;
    EXPECT_EQ(outcome(file, 3, chunk), reference) << file << ", 3 threads, chunks of " << chunk;
  }
}

std::vector<std::string> synth_lines(const TempDir& dir, int layers) {
  const fs::path out = dir / ("synth-" + std::to_string(layers) + ".jsonl");
  const auto r = run_cli({"synth", "--layers", std::to_string(layers), "--ops-per-span", "4",
                          "--seed", "7", "-o", out.string()});
  EXPECT_EQ(r.exit_code, 0) << candle_graph::testing::describe(r);
  return lines_of(read_file(out));
}

fs::path write(const TempDir& dir, const std::string& name, std::string_view text) {
  const fs::path p = dir / name;
  write_file(p, text);
  return p;
}

TEST(ParallelRead, EveryTraceFixtureReadsTheSame) {
  std::size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(CG_FIXTURE_DIR)) {
    if (entry.path().extension() != ".jsonl") continue;
    ++files;
    expect_same_as_one_thread(entry.path(), {1, 2, 7, 64, 333});
  }
  EXPECT_GE(files, 5u);  // tests/fixtures holds at least the five trace/6 fixtures
}

// Found by fuzz_parallel_read: line 9 of this file has `0,"timestamp_ns":…}` after its object and
// line 10 ends inside a string. With small chunks `-j 2` named line 10: line 9 ended a batch of
// lines, where the text after its object passed for part of one document. Every read names line
// 9, the line with the text after the object (read off the file by eye: sed -n 9p).
TEST(ParallelRead, TextAfterTheObjectIsTheFirstErrorWhateverTheChunks) {
  const fs::path file = fixture("trace/fuzz/value-and-brace-after-the-object.jsonl");
  const std::string expected = "error input " + file.string() +
                               ":9: invalid JSON: trailing characters after the event object";
  EXPECT_EQ(outcome(file, 1), expected);
  for (const std::size_t chunk : {1, 19, 40, 64, 300, 4096})
    for (const unsigned threads : {2u, 3u})
      EXPECT_EQ(outcome(file, threads, chunk), expected)
          << threads << " threads, chunks of " << chunk;
}

TEST(ParallelRead, SynthTraceOfManyChunksReadsTheSame) {
  TempDir dir;
  // ~6 MB (synth writes ~4.8 KB a layer): many of the reader's 512 KiB chunks, with their
  // default size, and past the first 4 MiB, after which the document is reserved and the threads
  // waiting for their turn map its next pages (PagePrefaulter).
  const fs::path big = write(dir, "big.jsonl", join_lines(synth_lines(dir, 1200)));
  ASSERT_GT(fs::file_size(big), std::uintmax_t{5} << 20);
  expect_same_as_one_thread(big, {4096, 65536});
}

// A regular file is cut by position, each thread reading its own chunks; a pipe is read in order,
// by one thread at a time. Both give the regular file's single-threaded document.
TEST(ParallelRead, APipeReadsTheSameAsTheFile) {
  TempDir dir;
  const std::string text = join_lines(synth_lines(dir, 300));
  const fs::path file = write(dir, "file.jsonl", text);
  const std::string reference = outcome(file, 1);
  for (const unsigned threads : {2u, 3u}) {
    for (std::size_t chunk : {std::size_t{0}, std::size_t{4096}}) {
      const fs::path fifo = dir / ("pipe-" + std::to_string(threads) + "-" + std::to_string(chunk));
      ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
      std::thread writer([&] { write_file(fifo, text); });
      EXPECT_EQ(outcome(fifo, threads, chunk), reference)
          << threads << " threads, chunks of " << chunk;
      writer.join();
    }
  }
}

// A line far longer than a chunk (2 MB against 4 KiB): the chunks inside it hold no line start,
// the chunk it starts in reads it whole, and the document is the one-thread document. (Those
// empty chunks stop reading at their own end; the time that saves is not asserted here.)
TEST(ParallelRead, ALineLongerThanManyChunksReadsTheSame) {
  TempDir dir;
  std::vector<std::string> lines = synth_lines(dir, 20);
  // A tag of 2 MB in the meta line (the first), then the rest of the trace.
  const std::string::size_type brace = lines[0].rfind('}');
  lines[0].insert(brace, ",\"padding\":\"" + std::string(2 << 20, 'p') + "\"");
  const fs::path file = write(dir, "long-line.jsonl", join_lines(lines));
  expect_same_as_one_thread(file, {4096, 65536});
}

// Chunks of one byte cost a hand-over between threads per byte, so the traces read that way are
// kept to a few hundred lines: every kind of line and boundary occurs in them many times over.
TEST(ParallelRead, IrregularLayoutsReadTheSame) {
  TempDir dir;
  std::vector<std::string> lines = synth_lines(dir, 10);
  // Lines that leave the fast scanner for simdjson's batches and the per-line path: spaces,
  // CRLF, blank lines, a BOM, a line longer than a small chunk, no final newline.
  std::string text = "\xEF\xBB\xBF";
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string line = lines[i];
    if (i % 3 == 1) line.insert(1, " ");
    if (i % 11 == 4) line.insert(line.size() - 1, ",\"pad\":\"" + std::string(5000, 'x') + "\"");
    if (i % 5 == 2) line += "\r";
    if (i % 7 == 3) text += "\n  \n";
    text += line + (i + 1 == lines.size() ? "" : "\n");
  }
  const fs::path file = write(dir, "irregular.jsonl", text);
  ASSERT_EQ(outcome(file, 1).substr(0, 3), "ok\n");  // the layouts are valid trace/6
  expect_same_as_one_thread(file, {1, 5, 97, 4096});
}

TEST(ParallelRead, CollectivesOfOpsReadTheSame) {
  TempDir dir;
  std::vector<std::string> lines = synth_lines(dir, 100);
  // A collective on every op line, each with its own group and sequence number: the parser keeps
  // one collective at a time, so a worker that kept a pointer to it would replay the wrong one.
  std::size_t ops = 0;
  for (std::string& line : lines) {
    if (line.rfind(R"({"kind":"op")", 0) != 0) continue;
    line.insert(line.size() - 1, R"(,"collective":"allreduce","process_group":"pg)" +
                                     std::to_string(ops) + R"(","collective_seq":)" +
                                     std::to_string(ops));
    ++ops;
  }
  ASSERT_GT(ops, 100u);
  const fs::path file = write(dir, "collectives.jsonl", join_lines(lines));
  ASSERT_NE(outcome(file, 1).find(R"("process_group":"pg)" + std::to_string(ops - 1) + "\""),
            std::string::npos);  // the trace is valid and its collectives are written back
  expect_same_as_one_thread(file, {64, 300, 65536});  // one line or less, and many lines
}

// A worker leaves span references in the chunk's text, where the replay resolves them to the
// span's own id. A reference to a span that starts later cannot be resolved then: it must be
// copied before its chunk is read into again, which the thousand lines after it make sure of.
TEST(ParallelRead, ReferencesToSpansNotStartedYetReadTheSame) {
  TempDir dir;
  const std::vector<std::string> lines = synth_lines(dir, 40);
  std::vector<std::string> trace = {lines[0]};  // the meta line
  for (int k = 0; k < 20; ++k)
    trace.push_back(R"({"kind":"edge","from_span":"late-)" + std::to_string(k) +
                    R"(","to_span":"late-)" + std::to_string(k + 1) + R"(","duration_ns":5})");
  trace.insert(trace.end(), lines.begin() + 1, lines.end());
  for (int k = 0; k <= 20; ++k) {
    trace.push_back(R"({"kind":"span_start","id":"late-)" + std::to_string(k) +
                    R"(","name":"late","start_ns":)" + std::to_string(900000000 + k) +
                    R"(,"span_kind":"function","measured":false})");
    trace.push_back(R"({"kind":"span_end","id":"late-)" + std::to_string(k) +
                    R"(","duration_ns":1})");
  }
  ASSERT_GT(trace.size(), 1000u);
  const fs::path file = write(dir, "late-spans.jsonl", join_lines(trace));
  // The single-threaded read keeps the edges and their ids, as written above.
  const std::string reference = outcome(file, 1);
  ASSERT_EQ(reference.substr(0, 3), "ok\n") << reference;
  ASSERT_NE(reference.find(R"("from_span":"late-19","to_span":"late-20")"), std::string::npos);
  expect_same_as_one_thread(file, {64, 4096});
}

TEST(ParallelRead, FirstErrorAndItsLineAreTheSame) {
  TempDir dir;
  const std::vector<std::string> lines = synth_lines(dir, 10);
  ASSERT_GT(lines.size(), 200u);
  // Each kind of error, alone and after another, at the start, middle and end of the file.
  const std::vector<std::pair<std::string, std::string>> breakages = {
      {"bad json", R"({"kind":"span_end","id":)"},
      {"unknown kind", R"({"kind":"nope"})"},
      {"two documents", R"({"kind":"span_end","id":"x","duration_ns":1} {"a":1})"},
      {"document over two lines", "{\"kind\":\"span_end\",\n\"id\":\"x\",\"duration_ns\":1}"},
      {"duplicate span", lines[1]},  // lines[1] is the first span_start: its id is taken
  };
  for (std::size_t at : {std::size_t{2}, lines.size() / 2, lines.size() - 1}) {
    for (const auto& [what, bad] : breakages) {
      std::vector<std::string> broken = lines;
      broken.insert(broken.begin() + static_cast<std::ptrdiff_t>(at), bad);
      const fs::path file = write(dir, "broken.jsonl", join_lines(broken));
      SCOPED_TRACE(what + " at line " + std::to_string(at + 1));
      expect_same_as_one_thread(file, {1, 64, 1000});
      // The line is where the test put it (index + 1), not what the reader says.
      const std::string expected_line = ":" + std::to_string(at + 1) + ":";
      EXPECT_NE(outcome(file, 2, 64).find(expected_line), std::string::npos)
          << outcome(file, 2, 64);
    }
  }
}

TEST(ParallelRead, ProgressReachesTheFileSize) {
  TempDir dir;
  const fs::path file = write(dir, "t.jsonl", join_lines(synth_lines(dir, 30)));
  ReadOptions options;
  options.threads = 2;
  std::uint64_t last_done = 0, last_total = 0;
  options.progress = [&](std::uint64_t done, std::uint64_t total) {
    last_done = done;
    last_total = total;
  };
  candle_graph::parse_trace(file, options);
  EXPECT_EQ(last_done, fs::file_size(file));
  EXPECT_EQ(last_total, fs::file_size(file));
}

// read_trace_file given the size the file had "when it was opened": larger than the file now is
// stands for a file another program truncated during the read, smaller for one it appended to.
std::string outcome_with_size(const fs::path& file, std::uint64_t size_at_open, unsigned threads,
                              std::size_t chunk_bytes) {
  ::setenv("CANDLE_GRAPH_TEST_CHUNK_BYTES", std::to_string(chunk_bytes).c_str(), 1);
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  ReadOptions options;
  options.threads = threads;
  std::string result;
  try {
    result = "ok\n" + candle_graph::write_jsonl_string(
                          candle_graph::read_trace_file(fd, file.string(), size_at_open, options));
  } catch (const Error& e) {
    result = "error " + std::string(candle_graph::to_string(e.kind())) + " " + e.what();
  }
  ::close(fd);
  ::unsetenv("CANDLE_GRAPH_TEST_CHUNK_BYTES");
  return result;
}

// A file that shrinks while it is read is an error naming the file and its size at the start,
// whether it now ends at a line's end (before, that read as a whole, shorter trace: no error at
// all) or inside a line (before, a JSON error on that line). A file that grew is read to its end.
TEST(ParallelRead, AFileThatShrankDuringTheReadIsAnError) {
  TempDir dir;
  const std::vector<std::string> lines = synth_lines(dir, 30);
  const std::string whole = join_lines(lines);
  const fs::path file = write(dir, "t.jsonl", whole);
  const std::string as_read = outcome(file, 1);
  ASSERT_TRUE(as_read.starts_with("ok\n"));
  // The first half of the lines, and the same cut 10 bytes into the next line.
  const std::string half = join_lines({lines.begin(), lines.begin() + lines.size() / 2});
  ASSERT_TRUE(whole.starts_with(half));
  const std::string whole_size = std::to_string(whole.size());
  for (const std::size_t cut : {half.size(), half.size() + 10}) {
    write(dir, "t.jsonl", whole.substr(0, cut));
    for (const unsigned threads : {1u, 2u, 3u}) {
      for (const std::size_t chunk : {std::size_t{64}, std::size_t{4096}, std::size_t{512} << 10}) {
        SCOPED_TRACE("cut at " + std::to_string(cut) + ", " + std::to_string(threads) +
                     " threads, chunks of " + std::to_string(chunk));
        const std::string r = outcome_with_size(file, whole.size(), threads, chunk);
        EXPECT_TRUE(r.starts_with("error io " + file.string() +
                                  ": the file shrank while it was read: it held " + whole_size +
                                  " bytes when the read began"))
            << r;
      }
    }
  }
  // Grown since it was opened (the size then: the first half): read to its end.
  write(dir, "t.jsonl", whole);
  for (const unsigned threads : {1u, 2u})
    EXPECT_EQ(outcome_with_size(file, half.size(), threads, 4096), as_read) << threads;
  // Unchanged: the same as parse_trace.
  EXPECT_EQ(outcome_with_size(file, whole.size(), 2, 4096), as_read);
}

// A line longer than the cap (256 MiB; 10,000 bytes here, through CANDLE_GRAPH_TEST_MAX_LINE_BYTES)
// is an error naming its line, whether a reader's buffer holds it whole or never reaches its end:
// `validate` with one thread and two, chunks smaller and larger than the line, and a pipe, read
// in order. A line of exactly the cap reads, and an error on an earlier line comes first.
TEST(ParallelRead, ALineOverTheCapIsAnErrorInEveryMode) {
  TempDir dir;
  const std::vector<std::string> lines = synth_lines(dir, 10);
  ASSERT_GT(lines.size(), 100u);
  const std::string too_long = "the line is longer than 10000 bytes";
  struct Case {
    std::string what;
    std::string text;
    std::uint64_t line = 0;  // of the error; 0: the file reads
    std::string message;     // the error's, after `PATH:LINE: `
  };
  std::vector<Case> cases;
  for (const std::size_t at : {std::size_t{0}, lines.size() / 2, lines.size() - 1}) {
    std::vector<std::string> with_long = lines;
    with_long.insert(with_long.begin() + static_cast<std::ptrdiff_t>(at), std::string(10001, 'x'));
    cases.push_back(
        {"10001 bytes at line " + std::to_string(at + 1), join_lines(with_long), at + 1, too_long});
  }
  // The file ends inside the last line.
  cases.push_back({"an unterminated last line", join_lines(lines) + std::string(20000, 'x'),
                   lines.size() + 1, too_long});
  {
    // The last line (the root's span_end) padded inside its braces to exactly the cap.
    std::vector<std::string> at_cap = lines;
    at_cap.back().insert(1, 10000 - at_cap.back().size(), ' ');
    cases.push_back({"a line of exactly the cap", join_lines(at_cap), 0, ""});
  }
  {
    std::vector<std::string> earlier = lines;
    const std::size_t at = lines.size() / 2;
    earlier.insert(earlier.begin() + static_cast<std::ptrdiff_t>(at), std::string(20000, 'x'));
    earlier.insert(earlier.begin() + static_cast<std::ptrdiff_t>(at), R"({"kind":"nope"})");
    cases.push_back(
        {"an unknown kind just before", join_lines(earlier), at + 1, "unknown event kind"});
  }
  const cgtest::ScopedEnv line_cap("CANDLE_GRAPH_TEST_MAX_LINE_BYTES", "10000");
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const fs::path file = write(dir, "capped.jsonl", c.text);
    const auto expected = [&](const fs::path& path) {
      return c.line == 0 ? std::string("ok")
                         : path.string() + ":" + std::to_string(c.line) + ": " + c.message;
    };
    for (const unsigned threads : {1u, 2u}) {
      for (const std::size_t chunk : {std::size_t{0}, std::size_t{64}, std::size_t{4096}}) {
        if (threads == 1 && chunk != 0) continue;  // chunks are the parallel read's
        std::optional<cgtest::ScopedEnv> chunks;
        if (chunk > 0)
          chunks.emplace("CANDLE_GRAPH_TEST_CHUNK_BYTES", std::to_string(chunk).c_str());
        const auto r = run_cli({"validate", file.string(), "-j", std::to_string(threads)});
        const std::string got =
            r.exit_code == 0 ? "ok" : r.err.substr(std::string("error: ").size());
        EXPECT_TRUE(got.starts_with(expected(file)))
            << threads << " threads, chunks of " << chunk << ": exit " << r.exit_code << "\n"
            << r.err;
      }
    }
    const fs::path fifo = dir / "pipe";
    fs::remove(fifo);
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    // The read may stop before the writer is done: its writes then fail (EPIPE), not kill the test.
    const auto old_pipe = ::signal(SIGPIPE, SIG_IGN);
    // Whether the writes all got in depends on when the read stopped: not checked.
    std::thread writer([&] { (void)candle_graph::testing::write_file(fifo, c.text); });
    const std::string r = outcome(fifo, 2, 4096);
    writer.join();
    ::signal(SIGPIPE, old_pipe);
    const std::string want = c.line == 0 ? "ok" : "error input " + expected(fifo);
    EXPECT_TRUE(r.starts_with(want)) << "a pipe:\n" << r.substr(0, 300);
  }
}

// The cap itself: a line of 256 MiB + 1 byte, with one thread and two.
TEST(ParallelRead, ALineOverTheDefaultCapIsAnError) {
  if (cgtest::kSanitized) GTEST_SKIP() << "a 256 MiB file; runs in the Release pass";
  TempDir dir;
  const std::vector<std::string> lines = synth_lines(dir, 3);
  const fs::path file =
      write(dir, "huge-line.jsonl", join_lines(lines) + std::string((256u << 20) + 1, 'x') + "\n");
  for (const char* threads : {"1", "2"}) {
    const auto r = run_cli({"validate", file.string(), "-j", threads});
    EXPECT_EQ(r.exit_code, 1) << threads;
    EXPECT_TRUE(r.err.starts_with("error: " + file.string() + ":" +
                                  std::to_string(lines.size() + 1) +
                                  ": the line is longer than 268435456 bytes"))
        << threads << ": " << r.err;
  }
}

TEST(ParallelRead, EmptyAndBlankFilesFailAlike) {
  TempDir dir;
  expect_same_as_one_thread(write(dir, "empty.jsonl", ""), {1});
  expect_same_as_one_thread(write(dir, "blank.jsonl", "\n \n\r\n"), {1, 2});
  expect_same_as_one_thread(write(dir, "bom.jsonl", "\xEF\xBB\xBF"), {1});
}

}  // namespace
