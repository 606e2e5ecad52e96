// Runs a program in a child process and captures its exit code, stdout and stderr (through temp
// files, so big outputs cannot dead-lock a pipe). The one way tests run the candle-graph binary
// (CG_BINARY) or another program (the sqlite3 shell, /usr/bin/python3, chromium's helpers).
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/files.hpp"
#include "support/temp_dir.hpp"

namespace candle_graph::testing {

struct RunResult {
  int exit_code = -1;  // -1 when the process did not exit normally (killed by a signal)
  std::string out;
  std::string err;
};

// Runs the program `args[0]` (an absolute path) with the rest as its arguments, stdin from
// /dev/null, in `cwd` (default: the current directory).
inline RunResult run_program(const std::vector<std::string>& args, const fs::path& cwd = {}) {
  TempDir io;
  const fs::path out_path = io / "stdout", err_path = io / "stderr";
  std::vector<std::string> argv_storage = args;
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int o = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int e = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int in = ::open("/dev/null", O_RDONLY);
    if (o < 0 || e < 0 || in < 0) ::_exit(126);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::dup2(in, 0);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(126);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  RunResult r;
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) {
    ADD_FAILURE() << "cannot run " << args.front();
    return r;
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  r.out = read_file(out_path);
  r.err = read_file(err_path);
  return r;
}

// Runs CG_BINARY with `args` in `cwd` (default: the current directory).
inline RunResult run_cli(const std::vector<std::string>& args, const fs::path& cwd = {}) {
  std::vector<std::string> argv = {CG_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv, cwd);
}

inline std::string describe(const RunResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\n--- stdout\n" + r.out.substr(0, 2000) +
         "\n--- stderr\n" + r.err.substr(0, 2000);
}

}  // namespace candle_graph::testing
