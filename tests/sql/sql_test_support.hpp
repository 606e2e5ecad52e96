// Shared by the SQL tests: running other programs (Debian's sqlite3 shell, /usr/bin/python3) the
// way cli_test_support runs candle-graph, and reading their JSON answers.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_test_support.hpp"

namespace cgsql {

using cgcli::RunResult;
namespace fs = std::filesystem;

// Runs `argv` (argv[0] an absolute path) with stdin from /dev/null.
inline RunResult run_program(const std::vector<std::string>& args) {
  cgcli::TempDir io;
  const fs::path out_path = io / "stdout", err_path = io / "stderr";
  std::vector<std::string> storage = args;
  std::vector<char*> argv;
  for (auto& a : storage) argv.push_back(a.data());
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
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  RunResult r;
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return r;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  r.out = cgcli::read_file(out_path);
  r.err = cgcli::read_file(err_path);
  return r;
}

// Debian's sqlite3 shell in -json mode: an array of row objects ([] when there is no row, which
// the shell prints as nothing).
inline nlohmann::json shell_query(const fs::path& db, const std::string& sql) {
  const RunResult r = run_program({"/usr/bin/sqlite3", "-readonly", "-json", db.string(), sql});
  EXPECT_EQ(r.exit_code, 0) << cgcli::describe(r);
  if (r.out.find_first_not_of(" \r\n") == std::string::npos) return nlohmann::json::array();
  return nlohmann::json::parse(r.out);
}

// `candle-graph sql ... --format json`, parsed; fails the test on a non-zero exit.
inline nlohmann::json cg_sql(std::vector<std::string> args) {
  args.insert(args.begin(), "sql");
  const RunResult r = cgcli::run_cli(args);
  EXPECT_EQ(r.exit_code, 0) << cgcli::describe(r);
  if (r.exit_code != 0) return nlohmann::json::object();
  return nlohmann::json::parse(r.out);
}

inline bool have(const char* program) {
  return ::access(program, X_OK) == 0;
}

// The sanitizer pass of CI runs only the fast tests (each CLI run is several times slower under
// ASan); the Release pass runs everything.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace cgsql

#define CG_SQL_SKIP_WHEN_SANITIZED() \
  if (cgsql::kSanitized) GTEST_SKIP() << "slow under ASan; runs in the Release pass"
