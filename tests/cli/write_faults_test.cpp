// Faults on the way out: every command that writes a file fails cleanly when the disk is full —
// exit 1, an error naming the destination, no file (not even a temporary one) left beside it,
// and its inputs byte for byte unchanged. A full disk is a 64 KiB tmpfs this test mounts and
// fills (root only); where mounting is not permitted, the same commands run with the injected
// write failure (CANDLE_GRAPH_TEST_WRITE_LIMIT), which every AtomicFile output honours.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>

#include "cli_test_support.hpp"
#include "support/full_disk.hpp"
#include "support/sanitizers.hpp"
#include "support/scoped_env.hpp"

namespace {

using namespace cgcli;
using candle_graph::testing::FullDisk;
using cgtest::ScopedEnv;
using ::testing::HasSubstr;

// The destination; `{OUT.x}` is another output of the same command, OUT + ".x".
constexpr const char* kOut = "{OUT}";

// The inputs every command reads, written once per test in a directory of their own.
struct Inputs {
  TempDir dir{"cg-faults-in"};
  fs::path trace, chrome, rank0, rank1;

  Inputs() {
    trace = dir / "trace.jsonl";
    chrome = dir / "chrome.json";
    rank0 = dir / "rank-0.jsonl";
    rank1 = dir / "rank-1.jsonl";
    const RunResult s = run_cli({"synth", "--layers", "4", "-o", trace.string()});
    EXPECT_EQ(s.exit_code, 0) << describe(s);
    const RunResult e =
        run_cli({"export", trace.string(), "--format", "chrome", "-o", chrome.string()});
    EXPECT_EQ(e.exit_code, 0) << describe(e);
    fs::copy_file(trace, rank0);
    fs::copy_file(trace, rank1);
  }

  // Every input's bytes by name, to show that a failed write left them alone.
  std::map<std::string, std::string> contents() const {
    std::map<std::string, std::string> out;
    for (const auto& name : dir.entries()) out[name] = read_file(dir / name);
    return out;
  }
};

struct WriteCase {
  std::string name;
  std::vector<std::string> args;  // kOut stands for the destination
  bool atomic_file = true;        // written through output::AtomicFile (honours the injection)
};

std::vector<WriteCase> writing_commands(const Inputs& in) {
  const std::string t = in.trace.string();
  return {
      {"import", {"import", t, "-o", kOut}},
      {"query", {"query", t, "--kind", "spans", "-o", kOut}},
      {"compare", {"compare", t, t, "-o", kOut}},
      {"report", {"report", t, "--json", kOut, "--markdown", "{OUT.md}"}},
      {"report-html",
       {"report", t, "--json", "{OUT.json}", "--markdown", "{OUT.md}", "--html", kOut}},
      {"view", {"view", t, "-o", kOut}},
      {"export-chrome", {"export", t, "--format", "chrome", "-o", kOut}},
      {"convert", {"convert", in.chrome.string(), "-o", kOut}},
      {"synth", {"synth", "--layers", "4", "-o", kOut}},
      {"ranks", {"ranks", in.rank0.string(), in.rank1.string(), "-o", kOut}},
      {"ranks-markdown", {"ranks", in.rank0.string(), in.rank1.string(), "--markdown", kOut}},
      {"ranks-pages", {"ranks", in.rank0.string(), in.rank1.string(), "--rank-pages", kOut}},
      {"export-sqlite", {"export", t, "--format", "sqlite", "-o", kOut}, false},
      {"report-bundle", {"report", t, "--bundle", kOut}, false},
  };
}

std::vector<std::string> with_output(std::vector<std::string> args, const fs::path& out) {
  for (auto& a : args) {
    if (a.starts_with("{OUT") && a.ends_with("}")) a = out.string() + a.substr(4, a.size() - 5);
  }
  return args;
}

void expect_clean_failure(const RunResult& r, const fs::path& out) {
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_THAT(r.err, HasSubstr(out.string())) << describe(r);
  EXPECT_FALSE(fs::exists(out)) << out;
}

TEST(WriteFaults, FullDiskFailsEveryWriterCleanly) {
  FullDisk disk;
  if (!disk.mounted())
    GTEST_SKIP() << "mounting a tmpfs is not permitted here (" << disk.refused()
                 << "); WriteFaults.InjectedWriteFailure covers the AtomicFile writers";
  // Even one more block cannot be written: the filler took them all.
  ASSERT_FALSE(write_file(disk.path() / "probe", std::string(8192, 'y')));
  fs::remove(disk.path() / "probe");
  const Inputs in;
  const auto before = in.contents();
  for (const WriteCase& c : writing_commands(in)) {
    SCOPED_TRACE(c.name);
    const fs::path out = disk.path() / ("out-" + c.name);
    expect_clean_failure(run_cli(with_output(c.args, out)), out);
    EXPECT_THAT(disk.entries(), ::testing::ElementsAre("filler")) << "a temporary file was left";
  }
  EXPECT_EQ(in.contents(), before) << "a failed write changed an input";
}

// Every writer takes an output name near the file system's 255-byte limit (240 bytes and the
// commands' own suffixes), though its temporary file or staging directory adds ~25-60 bytes to
// it: before, such a name failed with "File name too long". Nothing else is left beside it.
TEST(WriteFaults, OutputNamesNearTheLimitAreWritten) {
  const Inputs in;
  TempDir dest("cg-faults-out");
  for (const WriteCase& c : writing_commands(in)) {
    SCOPED_TRACE(c.name);
    const fs::path out = dest / std::string(240, 'o');
    const RunResult r = run_cli(with_output(c.args, out));
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(fs::exists(out));
    for (const auto& name : dest.entries())
      EXPECT_TRUE(name.starts_with(std::string(240, 'o'))) << "left: " << name;
    fs::remove_all(dest.path());
    fs::create_directories(dest.path());
  }
}

// A read-only file system: every writer fails before writing, with the system's reason (the
// SQLite export said only "unable to open database file" before it created its file itself).
TEST(WriteFaults, ReadOnlyFileSystemFailsEveryWriterWithTheReason) {
  FullDisk disk(FullDisk::Kind::read_only);
  if (!disk.mounted())
    GTEST_SKIP() << "mounting a tmpfs is not permitted here (" << disk.refused() << ")";
  const Inputs in;
  for (const WriteCase& c : writing_commands(in)) {
    SCOPED_TRACE(c.name);
    const fs::path out = disk.path() / ("out-" + c.name);
    const RunResult r = run_cli(with_output(c.args, out));
    expect_clean_failure(r, out);
    EXPECT_THAT(r.err, HasSubstr(std::strerror(EROFS)));
  }
  EXPECT_TRUE(disk.entries().empty());
}

// A command's outputs land together: when its last output cannot be written (on a full disk),
// the ones before it keep their old contents, instead of new ones beside old ones. Each command
// is first run with every output writable, to show that it writes them all.
TEST(WriteFaults, OutputsLandTogetherOrNotAtAll) {
  FullDisk disk;
  if (!disk.mounted())
    GTEST_SKIP() << "mounting a tmpfs is not permitted here (" << disk.refused() << ")";
  const Inputs in;
  const std::string t = in.trace.string(), r0 = in.rank0.string(), r1 = in.rank1.string();
  // {OUT.x} lands in a normal directory; the last output, {FULL}, on the full disk.
  const std::vector<std::vector<std::string>> commands = {
      {"report", t, "--json", "{OUT.json}", "--markdown", "{OUT.md}", "--html", "{FULL}"},
      {"ranks", r0, r1, "-o", "{OUT.json}", "--markdown", "{OUT.md}", "--html", "{FULL}"},
      {"ranks", r0, r1, "--rank-pages", "{OUT.pages}", "-o", "{FULL}"},
  };
  for (const auto& command : commands) {
    SCOPED_TRACE(command[0] + " " + command[command.size() - 4]);
    TempDir dest("cg-faults-out");
    const fs::path out = dest / "out";
    const auto args_with = [&](const fs::path& full) {
      std::vector<std::string> args = with_output(command, out);
      for (auto& a : args)
        if (a == "{FULL}") a = full.string();
      return args;
    };
    // All writable: every output is written.
    const RunResult ok = run_cli(args_with(dest / "last"));
    ASSERT_EQ(ok.exit_code, 0) << describe(ok);
    const std::vector<std::string> written = dest.entries();
    ASSERT_GE(written.size(), 2u);
    // The same outputs again, holding old contents, and the last one on the full disk.
    fs::remove_all(dest / "out.pages");
    for (const auto& name : dest.entries()) {
      ASSERT_TRUE(write_file(dest / name, "old " + name));
    }
    const RunResult r = run_cli(args_with(disk.path() / "last"));
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_THAT(r.err, HasSubstr((disk.path() / "last").string()));
    for (const auto& name : dest.entries()) {
      EXPECT_EQ(read_file(dest / name), "old " + name) << name << " was replaced";
    }
    EXPECT_FALSE(fs::exists(dest / "out.pages")) << "the pages' directory was left";
    EXPECT_THAT(disk.entries(), ::testing::ElementsAre("filler"));
  }
}

TEST(WriteFaults, InjectedWriteFailure) {
  const Inputs in;
  const auto before = in.contents();
  TempDir dest("cg-faults-out");
  const ScopedEnv fail("CANDLE_GRAPH_TEST_WRITE_LIMIT", "0");
  for (const WriteCase& c : writing_commands(in)) {
    if (!c.atomic_file) continue;
    SCOPED_TRACE(c.name);
    // In directories the command creates: they go too.
    const fs::path out = dest / ("new-" + c.name) / "dir" / "out";
    const RunResult r = run_cli(with_output(c.args, out));
    expect_clean_failure(r, out);
    EXPECT_THAT(r.err, HasSubstr(std::strerror(ENOSPC)));
    EXPECT_TRUE(dest.entries().empty()) << "left: " << ::testing::PrintToString(dest.entries());
  }
  EXPECT_EQ(in.contents(), before) << "a failed write changed an input";
}

TEST(WriteFaults, AFailedWriteKeepsTheOldDestination) {
  const Inputs in;
  TempDir dest("cg-faults-out");
  const fs::path out = dest / "evidence.json";
  ASSERT_TRUE(write_file(out, "old content"));
  const ScopedEnv fail("CANDLE_GRAPH_TEST_WRITE_LIMIT", "100");
  const RunResult r = run_cli({"import", in.trace.string(), "-o", out.string()});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_EQ(read_file(out), "old content");
  EXPECT_THAT(dest.entries(), ::testing::ElementsAre("evidence.json"));
}

using cgtest::kSanitized;

// Starts the CLI with `args` (stdout to `out`, discarded by default, closed when null; stderr
// to `err`) and returns its PID, without waiting.
pid_t start_cli(const std::vector<std::string>& args, const fs::path& err = "/dev/null",
                const char* out = "/dev/null", bool interrupt_ignored = false) {
  std::vector<std::string> storage = {CG_BINARY};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    const int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out == nullptr) {
      ::close(1);
    } else {
      const int out_fd = ::open(out, O_WRONLY);
      ::dup2(out_fd, 1);
    }
    ::dup2(err_fd, 2);
    // As a shell starts a foreground command (a background one of a script ignores SIGINT).
    ::signal(SIGINT, interrupt_ignored ? SIG_IGN : SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

// The size of the first `.NAME.tmp-` file in `dir`, or -1 when there is none.
std::intmax_t temp_file_size(const fs::path& dir, const std::string& name) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().filename().string().rfind("." + name + ".tmp-", 0) == 0) {
      const auto size = fs::file_size(e.path(), ec);
      return ec ? 0 : static_cast<std::intmax_t>(size);
    }
  }
  return -1;
}

// Waits until the temporary file of `name` in `dir` holds at least `min_bytes`, then sends
// `signal` to `pid`; false (and `pid` killed) when the process ended first or never got there.
bool signal_mid_write(pid_t pid, const fs::path& dir, const std::string& name,
                      std::intmax_t min_bytes, int signal) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (temp_file_size(dir, name) >= min_bytes) return ::kill(pid, signal) == 0;
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return false;
}

// SIGKILL mid-write; true when the process died of it.
bool kill_mid_write(pid_t pid, const fs::path& dir, const std::string& name,
                    std::intmax_t min_bytes) {
  if (!signal_mid_write(pid, dir, name, min_bytes, SIGKILL)) return false;
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

// About 12 MB of trace/6 (synth --help: ~1 KiB per layer and op-per-span): its exports take
// long enough to be caught while they write.
struct BigTrace {
  TempDir src{"cg-faults-in"};
  fs::path trace = src / "big.jsonl";
  std::string before;
  BigTrace() {
    EXPECT_EQ(run_cli({"synth", "--layers", "3000", "-o", trace.string()}).exit_code, 0);
    before = read_file(trace);
  }
};

TEST(WriteFaults, KilledMidWriteLeavesNoPartialFile) {
  if (kSanitized) GTEST_SKIP() << "slow under ASan; runs in the Release pass";
  const BigTrace big;
  const fs::path& trace = big.trace;
  for (const std::string format : {"chrome", "sqlite"}) {
    SCOPED_TRACE(format);
    TempDir dest("cg-faults-out");
    const fs::path out = dest / "out";
    // A Chrome export replaces an older file; an SQLite export refuses one (without --append).
    if (format == "chrome") {
      ASSERT_TRUE(write_file(out, "old content"));
    }
    const std::vector<std::string> run_args = {"export", trace.string(), "--format",
                                               format,   "-o",           out.string()};
    // Chrome JSON streams out from the start; SQLite keeps its pages in its cache until it
    // spills or commits, so that export is killed as soon as its file exists.
    const std::intmax_t min_bytes = format == "chrome" ? 1 : 0;
    ASSERT_TRUE(kill_mid_write(start_cli(run_args), dest.path(), "out", min_bytes))
        << "the export ended before it could be killed";
    // The destination holds what it held before; only the hidden temporary file is new.
    if (format == "chrome") {
      EXPECT_EQ(read_file(out), "old content");
    } else {
      EXPECT_FALSE(fs::exists(out));
    }
    EXPECT_GE(temp_file_size(dest.path(), "out"), 0) << "no temporary file: was it killed?";
    // The next run of the same output removes the dead process's temporary file.
    const RunResult again = run_cli(run_args);
    EXPECT_EQ(again.exit_code, 0) << describe(again);
    EXPECT_THAT(dest.entries(), ::testing::ElementsAre("out"));
  }
  EXPECT_EQ(read_file(trace), big.before) << "the input changed";
}

}  // namespace

namespace {

int wait_exit_code(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Standard output is an output like any other: when it cannot be written (a full disk behind
// `> out.json`, /dev/full, a closed descriptor) every command that prints there exits 1 and
// says why, instead of exiting 0 with its output lost. Each command is first run with stdout to
// a file, to show that it succeeds and prints something there.
TEST(WriteFaults, StdoutThatCannotBeWrittenIsAnError) {
  const Inputs in;
  const std::string t = in.trace.string();
  TempDir dest("cg-faults-out");
  const std::string json = (dest / "r.json").string(), md = (dest / "r.md").string();
  const std::vector<std::vector<std::string>> printing = {
      {"validate", t},
      {"summary", t},
      {"import", t},
      {"query", t, "--kind", "spans"},
      {"compare", t, t},
      {"ranks", in.rank0.string(), in.rank1.string()},
      {"sql", t, "SELECT name FROM spans"},
      {"sql", t, "SELECT name FROM spans", "--format", "csv"},
      {"export", t, "--format", "chrome", "-o", "-"},
      {"report", t, "--json", json, "--markdown", md, "--headline"},
      {"validate", "--help"},
      {"--version"},
  };
  const fs::path err = dest / "stderr";
  for (const auto& args : printing) {
    SCOPED_TRACE(args.front() + " " + args.back());
    const RunResult ok = run_cli(args);
    ASSERT_EQ(ok.exit_code, 0) << describe(ok);
    ASSERT_FALSE(ok.out.empty());
    for (const char* out : {"/dev/full", static_cast<const char*>(nullptr)}) {
      SCOPED_TRACE(out ? out : "closed");
      EXPECT_EQ(wait_exit_code(start_cli(args, err, out)), 1) << read_file(err);
      EXPECT_THAT(read_file(err), HasSubstr("error: <stdout>: cannot write to standard output"));
    }
  }
}

// Whether an entry of `dir` starts with `prefix`.
bool has_entry_starting(const fs::path& dir, const std::string& prefix) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().starts_with(prefix)) return true;
  return false;
}

// Ctrl-C, `timeout` or `kill` while an output is written: the process still dies of the signal
// (the shell's 130 for Ctrl-C), but first removes the temporary file of the output (or the
// bundle's staging directory), which SIGKILL leaves behind (KilledMidWriteLeavesNoPartialFile).
// What was at the destination before stays as it was.
TEST(WriteFaults, InterruptedWriteLeavesNothingBehind) {
  if (kSanitized) GTEST_SKIP() << "slow under ASan; runs in the Release pass";
  const BigTrace big;
  const std::string t = big.trace.string();
  struct Case {
    std::vector<std::string> args;
    std::string temp_prefix;  // of the temporary file or directory
    int signal;
  };
  const std::vector<Case> cases = {
      {{"export", t, "--format", "chrome", "-o", kOut}, ".out.tmp-", SIGINT},
      {{"export", t, "--format", "sqlite", "-o", kOut}, ".out.tmp-", SIGTERM},
      {{"report", t, "--bundle", kOut}, ".out.staging-", SIGINT},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args[0] + " " + c.args[2] + " " + c.args[3] + ", " + strsignal(c.signal));
    TempDir dest("cg-faults-out");
    const bool replaces = c.args[0] == "export" && c.args[3] == "chrome";
    // A new output goes into directories the command creates, which go too.
    const fs::path out = replaces ? dest / "out" : dest / "new" / "out";
    if (replaces) {
      ASSERT_TRUE(write_file(out, "old content"));
    }
    const pid_t pid = start_cli(with_output(c.args, out));
    // Signalled once its temporary file or directory exists (polled every 200 µs).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    bool signalled = false;
    while (!signalled && std::chrono::steady_clock::now() < deadline) {
      if (has_entry_starting(out.parent_path(), c.temp_prefix)) {
        signalled = ::kill(pid, c.signal) == 0;
        break;
      }
      if (::waitpid(pid, nullptr, WNOHANG) == pid) break;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    ASSERT_TRUE(signalled) << "the command ended before it could be signalled";
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "exit " << WEXITSTATUS(status);
    EXPECT_EQ(WTERMSIG(status), c.signal);
    if (replaces) {
      EXPECT_THAT(dest.entries(), ::testing::ElementsAre("out"));
      EXPECT_EQ(read_file(out), "old content");
    } else {
      EXPECT_TRUE(dest.entries().empty()) << "left: " << ::testing::PrintToString(dest.entries());
    }
  }
  EXPECT_EQ(read_file(big.trace), big.before) << "the input changed";
}

// A command that fails leaves none of the directories it created for its output: the SQLite
// export creates its database's directory before it reads the trace, and a broken trace left it
// behind, empty.
TEST(WriteFaults, AFailedCommandLeavesNoDirectoryItCreated) {
  TempDir in("cg-faults-in");
  const fs::path broken = in / "broken.jsonl";
  ASSERT_TRUE(write_file(broken, "not a trace\n"));
  const std::string t = broken.string();
  const std::vector<std::vector<std::string>> commands = {
      {"export", t, "--format", "sqlite", "-o", kOut},
      {"export", t, "--format", "chrome", "-o", kOut},
      {"import", t, "-o", kOut},
      {"report", t, "--bundle", kOut},
  };
  for (const auto& args : commands) {
    SCOPED_TRACE(args[0] + " " + args[2]);
    TempDir dest("cg-faults-out");
    const RunResult r = run_cli(with_output(args, dest / "a" / "b" / "out"));
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_THAT(r.err, HasSubstr(t));
    EXPECT_TRUE(dest.entries().empty()) << "left: " << ::testing::PrintToString(dest.entries());
  }
}

// A command started with SIGINT ignored (a background job of a script, `nohup`-like wrappers)
// keeps ignoring it, and finishes its output.
TEST(WriteFaults, AnIgnoredInterruptStaysIgnored) {
  if (kSanitized) GTEST_SKIP() << "slow under ASan; runs in the Release pass";
  const BigTrace big;
  TempDir dest("cg-faults-out");
  const fs::path out = dest / "out";
  const fs::path err = big.src / "stderr-ignored";
  const pid_t pid = start_cli(
      {"export", big.trace.string(), "--format", "chrome", "-o", out.string()}, err, "/dev/null",
      /*interrupt_ignored=*/true);
  ASSERT_TRUE(signal_mid_write(pid, dest.path(), "out", 1, SIGINT))
      << "the export ended before it could be signalled";
  EXPECT_EQ(wait_exit_code(pid), 0) << read_file(err);
  EXPECT_THAT(dest.entries(), ::testing::ElementsAre("out"));
  EXPECT_TRUE(read_file(out).ends_with("}}\n")) << "the output is incomplete";
}

TEST(WriteFaults, DestinationDirectoryRemovedMidWrite) {
  if (kSanitized) GTEST_SKIP() << "slow under ASan; runs in the Release pass";
  const BigTrace big;
  const fs::path& trace = big.trace;
  for (const std::string format : {"chrome", "sqlite"}) {
    SCOPED_TRACE(format);
    TempDir dest("cg-faults-out");
    const fs::path dir = dest / "gone";
    const fs::path out = dir / "out";
    fs::create_directory(dir);
    // The export is stopped while it writes, its directory removed, and then it goes on: its
    // temporary file is gone with the directory, so the rename at the end must fail.
    const fs::path err = big.src / ("stderr-" + format);
    const pid_t pid =
        start_cli({"export", trace.string(), "--format", format, "-o", out.string()}, err);
    ASSERT_TRUE(signal_mid_write(pid, dir, "out", format == "chrome" ? 1 : 0, SIGSTOP))
        << "the export ended before it could be stopped";
    fs::remove_all(dir);
    ::kill(pid, SIGCONT);
    EXPECT_EQ(wait_exit_code(pid), 1) << read_file(err);
    // The reason is the rename's (ENOENT), not whatever a later clean-up call left behind.
    EXPECT_THAT(read_file(err), HasSubstr(out.string() + ": cannot "));
    EXPECT_THAT(read_file(err), HasSubstr("No such file or directory"));
    EXPECT_FALSE(fs::exists(dir)) << "the export made the removed directory again";
    EXPECT_TRUE(dest.entries().empty());
  }
  EXPECT_EQ(read_file(trace), big.before) << "the input changed";
}

}  // namespace
