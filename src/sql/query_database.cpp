#include "sql/query_database.hpp"

#include <array>
#include <cstring>
#include <fstream>
#include <string>

#include "candle_graph/error.hpp"
#include "output/json_text.hpp"
#include "sqlite/sqlite_loader.hpp"
#include "sqlite/sqlite_schema.hpp"

namespace candle_graph::sql {

namespace {

// A file: URI for ATTACH with mode=ro: everything but unreserved characters and '/' is
// percent-encoded, so '?', '#' and '%' in a path cannot change the URI's meaning.
std::string read_only_uri(const std::filesystem::path& path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string uri = "file:";
  for (unsigned char c : std::filesystem::absolute(path).string()) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' ||
        c == '-' || c == '_' || c == '.' || c == '~') {
      uri += static_cast<char>(c);
    } else {
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 15];
    }
  }
  uri += "?mode=ro";
  return uri;
}

}  // namespace

bool is_sqlite_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string(), 0, "cannot open: " + std::string(std::strerror(errno)));
  std::array<char, 16> head{};
  in.read(head.data(), head.size());
  return in.gcount() == 16 && std::memcmp(head.data(), "SQLite format 3", 16) == 0;
}

QueryDatabase QueryDatabase::open_file(const std::filesystem::path& path) {
  auto db = std::make_unique<sqlite::Connection>(path.string(), SQLITE_OPEN_READONLY);
  // A query on a damaged or non-database file fails here, with SQLite's message and the path.
  db->exec("SELECT count(*) FROM sqlite_schema");
  return QueryDatabase(std::move(db));
}

QueryDatabase QueryDatabase::in_memory() {
  auto db =
      std::make_unique<sqlite::Connection>(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                                                           SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX);
  // No rollback journal: a failed load ends the command, nothing is ever rolled back.
  db->exec("PRAGMA journal_mode = OFF");
  // 64 KiB pages: a sixteenth of the pages to fill and balance while the traces load (0.91x the
  // time of `sql` on the 98 MB synth trace), and nothing reads this database but this process,
  // whose lookups read its pages in place.
  db->exec("PRAGMA page_size = 65536");
  db->exec("BEGIN");
  sqlite::create_schema(*db);
  return QueryDatabase(std::move(db));
}

void QueryDatabase::add_run(const TraceDocument& doc, std::string_view source,
                            const std::function<evidence::EvidencePacket()>& analyse,
                            const sqlite::StepProgress& progress) {
  sqlite::load_run_overlapped(*db_, doc, source, analyse, progress);
}

void QueryDatabase::add_database(const std::filesystem::path& path) {
  const std::string name = "source" + std::to_string(++attached_);
  {
    sqlite::Statement attach(*db_, "ATTACH DATABASE ?1 AS " + name);
    attach.bind_text(1, read_only_uri(path), /*stable=*/false);
    try {
      attach.run();
    } catch (const Error& e) {
      throw Error(path.string(), 0, e.message());
    }
  }
  try {
    sqlite::check_schema(*db_, name, path.string());
    sqlite::Statement dup(*db_, "SELECT run_id FROM " + name +
                                    ".runs WHERE run_id IN (SELECT run_id FROM main.runs)");
    if (dup.step()) {
      const unsigned char* id = sqlite3_column_text(dup.get(), 0);
      std::string quoted;
      output::append_json_string(quoted, id ? reinterpret_cast<const char*>(id) : "");
      throw Error(path.string(), 0,
                  "run_id " + quoted + " is also in an earlier source; each run is loaded once");
    }
    for (std::string_view table : sqlite::table_names()) {
      if (table == "schema") continue;
      db_->exec("INSERT INTO main." + std::string(table) + " SELECT * FROM " + name + "." +
                std::string(table));
    }
  } catch (const Error& e) {
    if (e.path() == path.string()) throw;
    throw Error(path.string(), 0, e.message());
  }
  // DETACH waits for finish_loading: it is refused inside the transaction that read the file.
}

void QueryDatabase::finish_loading(const sqlite::StepProgress& progress) {
  sqlite::create_indices(*db_, progress);
  db_->exec("COMMIT");
  for (int i = 1; i <= attached_; ++i) db_->exec("DETACH DATABASE source" + std::to_string(i));
}

}  // namespace candle_graph::sql
