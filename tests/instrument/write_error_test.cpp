// A write that fails on the writer thread (line_sink.hpp) is reported to the recording thread as
// an InstrumentError naming the cause, and the file keeps only whole lines.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstring>

#include "candle_graph/instrument.hpp"
#include "instrument/session_test_support.hpp"

namespace candle_graph {
namespace {

using testing_support::ScratchDir;

constexpr rlim_t kFileLimit = 1 << 20;  // 1 MiB: several hand-offs to the writer thread

// Child exit codes: 0 = an InstrumentError with the expected text, else what went wrong.
int record_until_the_file_limit(const std::filesystem::path& path) {
  ::signal(SIGXFSZ, SIG_IGN);  // so write() fails with EFBIG instead of killing the process
  const rlimit limit{kFileLimit, kFileLimit};
  if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) return 10;
  const std::array<std::uint64_t, 2> shape{32, 32};
  try {
    TraceSession session(path, ProfileRun::training("e", 1, "cpu"));
    for (int i = 0; i < 100'000; ++i)  // ~15 MB: far past the limit
      session.record_op(session.envelope(),
                        {.op_name = "matmul", .shape = shape, .dtype = "f32", .device = "cpu"});
    session.finish();
    return 11;  // no error at all
  } catch (const InstrumentError& e) {
    const std::string what = e.what();
    if (what.find("cannot write the trace file") == std::string::npos) return 12;
    if (what.find(std::strerror(EFBIG)) == std::string::npos) return 13;
    if (what.find(path.string()) == std::string::npos) return 14;
    return 0;
  } catch (...) {
    return 15;
  }
}

TEST(InstrumentWriteError, WriterThreadFailureIsThrownToTheRecorderAndTheFileStaysWhole) {
  ScratchDir dir;
  const auto path = dir / "limited.jsonl";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(record_until_the_file_limit(path));
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10 setrlimit, 11 no error, 12/13/14 message, 15 other";

  const std::string text = testing_support::read_file(path);
  EXPECT_GT(text.size(), 0u);
  EXPECT_LE(text.size(), kFileLimit);
  EXPECT_EQ(text.back(), '\n');                    // cut back to whole lines
  EXPECT_GT(parse_trace(path).ops.size(), 1000u);  // and what is there parses
}

}  // namespace
}  // namespace candle_graph
