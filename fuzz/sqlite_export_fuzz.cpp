// libFuzzer target for `export --format sqlite` (src/sqlite): every trace/6 file the reader
// accepts and health trusts is loaded into a new candle-graph/sql/1 database, which is then read
// back through SQLite's own C API (not the exporter's code): the database opens and passes
// `PRAGMA integrity_check`, it holds one row per span, op and memory event, and the span and op
// names, whatever bytes they hold (NULs, invalid-looking escapes, long runs), are the document's
// byte for byte, in the document's order.
// Input: the trace/6 file.
#include <sqlite3.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "candle_graph/error.hpp"
#include "candle_graph/health.hpp"
#include "candle_graph/trace.hpp"
#include "evidence/packet_builder.hpp"
#include "fuzz_support.hpp"
#include "sqlite/sqlite_export.hpp"
#include "trace_input.hpp"

namespace {

using namespace candle_graph;
using candle_graph::fuzz::fail;

// The first column of every row of `sql`, as bytes.
std::vector<std::string> column(sqlite3* db, const char* sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) != SQLITE_OK)
    fail("cannot query the exported database", sqlite3_errmsg(db));
  std::vector<std::string> rows;
  int rc = SQLITE_ROW;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    rows.emplace_back(text ? text : "", static_cast<std::size_t>(sqlite3_column_bytes(stmt, 0)));
  }
  if (rc != SQLITE_DONE) fail("cannot read the exported database", sqlite3_errmsg(db));
  sqlite3_finalize(stmt);
  return rows;
}

template <typename Events, typename Name>
void expect_names(sqlite3* db, const char* sql, const Events& events, Name name, const char* what) {
  const std::vector<std::string> rows = column(db, sql);
  if (rows.size() != events.size()) fail(what, "a different number of rows");
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i] != name(events[i])) fail(what, rows[i]);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const TraceDocument doc = fuzz::trace_input(data, size, fuzz::Traces::trusted);

  const std::filesystem::path path = fuzz::scratch_dir() / "fuzz.db";
  std::filesystem::remove(path);
  try {
    sqlite::DatabaseFile file(path, false);
    file.add_run(doc, "fuzz.jsonl",
                 [&] { return evidence::build_packet(doc, nullptr, std::nullopt, std::nullopt); });
    file.commit();
  } catch (const Error& e) {
    fail("the export of a trusted trace failed", e.what());
  }

  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK)
    fail("the exported database does not open", db ? sqlite3_errmsg(db) : "");
  const std::vector<std::string> integrity = column(db, "PRAGMA integrity_check");
  if (integrity != std::vector<std::string>{"ok"})
    fail("the exported database fails its integrity check", integrity.at(0));
  expect_names(
      db, "SELECT name FROM spans ORDER BY span_index", doc.spans(),
      [](const SpanRecord& s) { return std::string(s.name); }, "span names differ");
  expect_names(
      db, "SELECT op_name FROM ops ORDER BY op_index", doc.ops(),
      [](const OpEvent& o) { return std::string(o.op_name); }, "op names differ");
  const std::vector<std::string> memory = column(db, "SELECT count(*) FROM memory_events");
  if (memory.at(0) != std::to_string(doc.memory().size()))
    fail("the memory events' count differs", memory.at(0));
  sqlite3_close(db);
  return 0;
}
