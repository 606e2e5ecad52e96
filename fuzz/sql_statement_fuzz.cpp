// libFuzzer target for the `sql` statement path: any statement against the candle-graph/sql/1
// schema (a few rows in every table) must give rows or a clean Error, within the timeout, and
// must never write: no change to the database, its schema or the directory it runs in (where
// VACUUM INTO or ATTACH would create a file). Every rendering of the rows is exercised.
//
// Input: one control byte (bits 0-1: JSON, CSV or table; bit 2: a row limit of 3), then the
// statement.
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "candle_graph/error.hpp"
#include "fuzz_support.hpp"
#include "sql/query_runner.hpp"
#include "sql/result_format.hpp"
#include "sqlite/sqlite_schema.hpp"

namespace {

namespace fuzz = candle_graph::fuzz;
namespace sqlite = candle_graph::sqlite;

// An in-memory database with the schema and one default row per table where the schema allows
// it (a NOT NULL column without a default refuses, which is fine: that table stays empty).
sqlite::Connection& database() {
  static sqlite::Connection* db = [] {
    auto* c = new sqlite::Connection(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    sqlite::create_schema(*c);
    for (std::string_view table : sqlite::table_names())
      sqlite3_exec(c->get(), ("INSERT INTO " + std::string(table) + " DEFAULT VALUES").c_str(),
                   nullptr, nullptr, nullptr);
    sqlite::create_indices(*c);
    return c;
  }();
  return *db;
}

std::int64_t schema_version(sqlite3* db) {
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA schema_version", -1, &s, nullptr);
  const std::int64_t v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
  sqlite3_finalize(s);
  return v;
}

std::size_t files_in_cwd() {
  std::size_t n = 0;
  for (auto it = std::filesystem::directory_iterator(".");
       it != std::filesystem::directory_iterator(); ++it)
    ++n;
  return n;
}

}  // namespace

// Every input runs in a scratch directory (a statement that slipped past the read-only checks
// would create its file there), so libFuzzer's own paths would be read and written relative to
// it after the first input: a corpus directory given as `build-fuzz/corpus/sql_statement` loads
// its first seed and no other ("no interesting inputs were found"). They are made absolute here,
// before libFuzzer reads them: the corpus directories and files, and the artifact paths.
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  static std::vector<std::string> texts;
  static std::vector<char*> args;
  for (int i = 0; i < *argc; ++i) {
    std::string arg = (*argv)[i];
    for (std::string_view flag : {"-artifact_prefix=", "-exact_artifact_path="}) {
      if (arg.starts_with(flag) && arg.size() > flag.size())
        arg = std::string(flag) + std::filesystem::absolute(arg.substr(flag.size())).string();
    }
    if (i > 0 && !arg.empty() && arg[0] != '-') arg = std::filesystem::absolute(arg).string();
    texts.push_back(std::move(arg));
  }
  for (std::string& t : texts) args.push_back(t.data());
  args.push_back(nullptr);
  *argv = args.data();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace candle_graph;
  static const bool in_scratch = chdir(fuzz::scratch_dir().c_str()) == 0;
  if (!in_scratch) fuzz::fail("cannot enter the scratch directory", "");
  const fuzz::Split in = fuzz::split_control(data, size);
  sqlite::Connection& db = database();
  const int changes = sqlite3_total_changes(db.get());
  const std::int64_t version = schema_version(db.get());
  const std::size_t files = files_in_cwd();

  std::string out;
  const auto append = [&out](std::string_view s) { out.append(s); };
  std::optional<std::uint64_t> limit;
  if (in.control & 4) limit = 3;
  std::unique_ptr<sql::ResultSink> sink;
  switch (in.control & 3) {
    case 0:
      sink = sql::json_result(append, limit);
      break;
    case 1:
      sink = sql::csv_result(append);
      break;
    default:
      sink = sql::table_result(append, 20);
      break;
  }
  sql::QueryOptions options;
  options.limit = limit;
  options.timeout_seconds = 1;
  bool ok = true;
  try {
    sql::run_query(db, in.rest, options, *sink);
  } catch (const Error& e) {
    ok = false;
    if (e.message().empty()) fuzz::fail("an empty error", in.rest);
  }
  if (sqlite3_total_changes(db.get()) != changes || schema_version(db.get()) != version)
    fuzz::fail("a statement changed the database", in.rest);
  if (files_in_cwd() != files) fuzz::fail("a statement created a file", in.rest);
  if (ok && (in.control & 3) == 0 && !nlohmann::json::accept(out))
    fuzz::fail("the JSON result is not valid JSON", out);
  return 0;
}
