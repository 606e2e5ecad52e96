// Shared by the SQL tests: running other programs (Debian's sqlite3 shell, /usr/bin/python3) with
// cli_test_support's run_program, and reading their JSON answers.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_test_support.hpp"
#include "support/sanitizers.hpp"

namespace cgsql {

using cgcli::run_program;
using cgcli::RunResult;
namespace fs = std::filesystem;

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

// The sanitizer pass of CI runs only the fast tests; the Release pass runs everything.
using cgtest::kSanitized;

}  // namespace cgsql

#define CG_SQL_SKIP_WHEN_SANITIZED() \
  if (cgsql::kSanitized) GTEST_SKIP() << "slow under ASan; runs in the Release pass"
