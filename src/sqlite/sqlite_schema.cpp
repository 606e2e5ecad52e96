#include "sqlite/sqlite_schema.hpp"
#include "sqlite/sorter_memory.hpp"

#include <array>
#include <iterator>
#include <string>
#include <vector>

#include "candle_graph/error.hpp"

namespace candle_graph::sqlite {

namespace {

// Plain (non-STRICT) tables: STRICT needs SQLite 3.37, and the database must open in older
// clients too. The (run_id, *_index) keys are unique indices built after the load, not PRIMARY
// KEY constraints: a constraint's index would be updated row by row during the bulk insert. Every
// per-run table leads with run_id; `*_index` columns are 0-based positions in the trace's own order
// (spans in start order, ops in document order, …).
constexpr std::string_view kTables = R"sql(
CREATE TABLE schema (
  name TEXT NOT NULL,
  created_by TEXT NOT NULL
);
CREATE TABLE runs (
  run_id TEXT PRIMARY KEY NOT NULL,
  source TEXT NOT NULL,
  trace_schema TEXT NOT NULL,
  correlation_id TEXT NOT NULL,
  entrypoint TEXT NOT NULL,
  phase TEXT NOT NULL,
  timestamp TEXT NOT NULL,
  capture_step INTEGER NOT NULL,
  warmup_steps INTEGER NOT NULL,
  device TEXT NOT NULL,
  measured_region_device_synchronized INTEGER NOT NULL,
  timing_mode TEXT NOT NULL,
  candle_version TEXT,
  event_count INTEGER NOT NULL,
  trusted INTEGER NOT NULL,
  coverage_spans INTEGER NOT NULL,
  coverage_closed_spans INTEGER NOT NULL,
  coverage_root_spans INTEGER NOT NULL,
  coverage_measured_spans INTEGER NOT NULL,
  coverage_operations INTEGER NOT NULL,
  coverage_tensors INTEGER NOT NULL,
  coverage_memory_events INTEGER NOT NULL,
  coverage_device_memory_samples INTEGER NOT NULL,
  coverage_gradients INTEGER NOT NULL,
  coverage_edges INTEGER NOT NULL,
  coverage_forward_spans INTEGER NOT NULL,
  coverage_backward_spans INTEGER NOT NULL,
  coverage_optimizer_spans INTEGER NOT NULL,
  total_ms REAL NOT NULL,
  peak_bytes INTEGER NOT NULL,
  peak_timestamp_ns INTEGER NOT NULL,
  peak_device TEXT,
  alloc_count INTEGER NOT NULL,
  free_count INTEGER NOT NULL,
  total_alloc_bytes INTEGER NOT NULL,
  autograd_retained_bytes INTEGER NOT NULL,
  gpu_status TEXT NOT NULL,
  gpu_reason TEXT,
  rank INTEGER
);
CREATE TABLE run_tags (
  run_id TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  rank INTEGER
);
CREATE TABLE peak_by_category (
  run_id TEXT NOT NULL,
  category TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  rank INTEGER
);
CREATE TABLE spans (
  run_id TEXT NOT NULL,
  span_index INTEGER NOT NULL,
  span_id TEXT NOT NULL,
  parent_id TEXT,
  parent_index INTEGER,
  name TEXT NOT NULL,
  kind TEXT NOT NULL,
  node_kind TEXT NOT NULL,
  measured INTEGER NOT NULL,
  step TEXT,
  depth INTEGER NOT NULL,
  start_ns INTEGER NOT NULL,
  closed INTEGER NOT NULL,
  duration_ns INTEGER NOT NULL,
  total_time_ns INTEGER NOT NULL,
  self_time_ns INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  peak_bytes INTEGER NOT NULL,
  device_self_ns INTEGER NOT NULL,
  device_total_ns INTEGER NOT NULL,
  rank INTEGER
);
CREATE TABLE ops (
  run_id TEXT NOT NULL,
  op_index INTEGER NOT NULL,
  node_id TEXT NOT NULL,
  span_id TEXT NOT NULL,
  span_index INTEGER,
  op_ordinal INTEGER NOT NULL,
  op_name TEXT NOT NULL,
  timestamp_ns INTEGER NOT NULL,
  duration_ns INTEGER NOT NULL,
  self_time_ns INTEGER NOT NULL,
  device TEXT NOT NULL,
  dtype TEXT NOT NULL,
  shape TEXT NOT NULL,
  storage_bytes INTEGER NOT NULL,
  input_storage_bytes INTEGER NOT NULL,
  output TEXT,
  input_count INTEGER NOT NULL,
  op_kind TEXT NOT NULL,
  total_ns INTEGER NOT NULL,
  thread INTEGER,
  correlation INTEGER,
  device_self_ns INTEGER NOT NULL,
  device_total_ns INTEGER NOT NULL,
  rank INTEGER
);
CREATE TABLE kernels (
  run_id TEXT NOT NULL,
  kernel_index INTEGER NOT NULL,
  name TEXT NOT NULL,
  demangled TEXT NOT NULL,
  kind TEXT NOT NULL,
  device TEXT NOT NULL,
  stream INTEGER,
  start_ns INTEGER NOT NULL,
  duration_ns INTEGER NOT NULL,
  correlation INTEGER,
  bytes INTEGER NOT NULL,
  launch_op_index INTEGER,
  runtime_op_index INTEGER,
  span_id TEXT NOT NULL,
  span_index INTEGER,
  rank INTEGER
);
CREATE TABLE gpu_devices (
  run_id TEXT NOT NULL,
  device TEXT NOT NULL,
  window_ns INTEGER NOT NULL,
  busy_ns INTEGER NOT NULL,
  idle_ns INTEGER NOT NULL,
  idle_host_wait_ns INTEGER NOT NULL,
  idle_kernel_wait_ns INTEGER NOT NULL,
  idle_other_ns INTEGER NOT NULL,
  compute_ns INTEGER NOT NULL,
  communication_ns INTEGER NOT NULL,
  memory_ns INTEGER NOT NULL,
  sync_ns INTEGER NOT NULL,
  comm_compute_overlap REAL,
  launches INTEGER NOT NULL,
  short_kernels INTEGER NOT NULL,
  runtime_outliers INTEGER NOT NULL,
  delay_outliers INTEGER NOT NULL,
  mean_delay_ns INTEGER NOT NULL,
  p50_delay_ns INTEGER NOT NULL,
  p95_delay_ns INTEGER NOT NULL,
  max_delay_ns INTEGER NOT NULL,
  rank INTEGER
);
CREATE TABLE gpu_streams (
  run_id TEXT NOT NULL,
  device TEXT NOT NULL,
  stream INTEGER NOT NULL,
  busy_ns INTEGER NOT NULL,
  host_wait_ns INTEGER NOT NULL,
  kernel_wait_ns INTEGER NOT NULL,
  other_wait_ns INTEGER NOT NULL,
  rank INTEGER
);
CREATE TABLE op_inputs (
  run_id TEXT NOT NULL,
  op_index INTEGER NOT NULL,
  position INTEGER NOT NULL,
  tensor_id TEXT NOT NULL,
  rank INTEGER
);
CREATE TABLE tensors (
  run_id TEXT NOT NULL,
  tensor_index INTEGER NOT NULL,
  span_id TEXT NOT NULL,
  span_index INTEGER,
  tensor_id TEXT NOT NULL,
  shape TEXT NOT NULL,
  dtype TEXT NOT NULL,
  device TEXT NOT NULL,
  requires_grad INTEGER NOT NULL,
  storage_bytes INTEGER NOT NULL,
  category TEXT NOT NULL,
  rank INTEGER
);
CREATE TABLE memory_events (
  run_id TEXT NOT NULL,
  event_index INTEGER NOT NULL,
  timestamp_ns INTEGER NOT NULL,
  action TEXT NOT NULL,
  tensor_id TEXT NOT NULL,
  span_id TEXT NOT NULL,
  span_index INTEGER,
  op_name TEXT,
  device TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  shape TEXT NOT NULL,
  dtype TEXT NOT NULL,
  category TEXT NOT NULL,
  rank INTEGER
);
CREATE TABLE device_memory (
  run_id TEXT NOT NULL,
  sample_index INTEGER NOT NULL,
  timestamp_ns INTEGER NOT NULL,
  device TEXT NOT NULL,
  used_bytes INTEGER NOT NULL,
  free_bytes INTEGER NOT NULL,
  reserved_bytes INTEGER,
  rank INTEGER
);
CREATE TABLE gradients (
  run_id TEXT NOT NULL,
  gradient_index INTEGER NOT NULL,
  event_id TEXT NOT NULL,
  root TEXT NOT NULL,
  key TEXT NOT NULL,
  state TEXT NOT NULL,
  norm REAL,
  rank INTEGER
);
CREATE TABLE edges (
  run_id TEXT NOT NULL,
  edge_index INTEGER NOT NULL,
  from_id TEXT NOT NULL,
  to_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  duration_ns INTEGER NOT NULL,
  label TEXT,
  rank INTEGER
);
CREATE TABLE memory_timeline (
  run_id TEXT NOT NULL,
  point_index INTEGER NOT NULL,
  timestamp_ns INTEGER NOT NULL,
  device TEXT NOT NULL,
  live_bytes INTEGER NOT NULL,
  free_bytes INTEGER NOT NULL,
  activation_bytes INTEGER,
  gradient_bytes INTEGER,
  optimizer_bytes INTEGER,
  other_bytes INTEGER,
  parameter_bytes INTEGER,
  rank INTEGER
);
CREATE TABLE peak_allocations (
  run_id TEXT NOT NULL,
  rank INTEGER NOT NULL,
  tensor_id TEXT NOT NULL,
  span_id TEXT NOT NULL,
  span_index INTEGER,
  op_name TEXT,
  bytes INTEGER NOT NULL,
  shape TEXT NOT NULL,
  dtype TEXT NOT NULL,
  device TEXT NOT NULL,
  category TEXT NOT NULL,
  process_rank INTEGER
);
CREATE TABLE memory_by_device (
  run_id TEXT NOT NULL,
  device TEXT NOT NULL,
  capacity_bytes INTEGER NOT NULL,
  peak_bytes INTEGER NOT NULL,
  peak_timestamp_ns INTEGER NOT NULL,
  alloc_count INTEGER NOT NULL,
  free_count INTEGER NOT NULL,
  rank INTEGER
);
CREATE TABLE health_issues (
  run_id TEXT NOT NULL,
  issue_index INTEGER NOT NULL,
  severity TEXT NOT NULL,
  code TEXT NOT NULL,
  message TEXT NOT NULL,
  rank INTEGER
);
CREATE TABLE findings (
  run_id TEXT NOT NULL,
  finding_index INTEGER NOT NULL,
  text TEXT NOT NULL,
  rank INTEGER
);
CREATE TABLE facts (
  run_id TEXT NOT NULL,
  fact_index INTEGER NOT NULL,
  code TEXT NOT NULL,
  label TEXT NOT NULL,
  value REAL NOT NULL,
  unit TEXT NOT NULL,
  source TEXT NOT NULL,
  rank INTEGER
);
CREATE TABLE gaps (
  run_id TEXT NOT NULL,
  gap_index INTEGER NOT NULL,
  text TEXT NOT NULL,
  rank INTEGER
);
CREATE TABLE nsight_summary (
  run_id TEXT NOT NULL,
  section TEXT NOT NULL,
  row_index INTEGER NOT NULL,
  name TEXT NOT NULL,
  category TEXT,
  total_ns INTEGER NOT NULL,
  count INTEGER NOT NULL,
  average_ns INTEGER NOT NULL,
  minimum_ns INTEGER NOT NULL,
  maximum_ns INTEGER NOT NULL,
  rank INTEGER
);
CREATE TABLE nsight_timeline (
  run_id TEXT NOT NULL,
  section TEXT NOT NULL,
  row_index INTEGER NOT NULL,
  name TEXT NOT NULL,
  kind TEXT NOT NULL,
  device INTEGER,
  context INTEGER,
  stream INTEGER,
  correlation_id INTEGER,
  semantic_key TEXT,
  start_ns INTEGER NOT NULL,
  duration_ns INTEGER NOT NULL,
  projected_start_ns INTEGER,
  projected_duration_ns INTEGER,
  gpu_operations INTEGER,
  matched INTEGER,
  category TEXT,
  bytes INTEGER,
  rank INTEGER
);
)sql";

constexpr std::array<std::string_view, 25> kTableNames{"schema",
                                                       "runs",
                                                       "run_tags",
                                                       "peak_by_category",
                                                       "spans",
                                                       "ops",
                                                       "kernels",
                                                       "gpu_devices",
                                                       "gpu_streams",
                                                       "op_inputs",
                                                       "tensors",
                                                       "memory_events",
                                                       "device_memory",
                                                       "gradients",
                                                       "edges",
                                                       "memory_timeline",
                                                       "peak_allocations",
                                                       "memory_by_device",
                                                       "health_issues",
                                                       "findings",
                                                       "facts",
                                                       "gaps",
                                                       "nsight_summary",
                                                       "nsight_timeline",
                                                       ""};

// Views answer the common questions with the stored numbers; they never recompute an analysis.
constexpr std::string_view kViews = R"sql(
CREATE VIEW op_stats AS
  SELECT run_id, op_name AS name, COUNT(*) AS calls, SUM(total_ns) AS total_ns,
         SUM(self_time_ns) AS self_ns, AVG(total_ns) AS mean_ns, MIN(total_ns) AS min_ns,
         MAX(total_ns) AS max_ns, SUM(storage_bytes) AS output_bytes
  FROM ops GROUP BY run_id, op_name;
CREATE VIEW span_costs AS
  SELECT s.run_id, s.span_index, s.span_id, s.parent_id, s.name, s.node_kind AS kind, s.step,
         s.depth, s.measured, s.total_time_ns, s.self_time_ns, s.bytes, s.peak_bytes,
         COALESCE(o.op_count, 0) AS op_count, COALESCE(o.op_time_ns, 0) AS op_time_ns
  FROM spans AS s
  LEFT JOIN (SELECT run_id, span_index, COUNT(*) AS op_count, SUM(duration_ns) AS op_time_ns
             FROM ops GROUP BY run_id, span_index) AS o
    ON o.run_id = s.run_id AND o.span_index = s.span_index;
CREATE VIEW live_at_peak AS
  SELECT p.run_id, p.rank, p.tensor_id, p.bytes, p.category, p.dtype, p.shape, p.device,
         p.op_name, p.span_id, s.name AS span_name, s.step AS span_step, r.peak_bytes AS run_peak_bytes,
         r.peak_timestamp_ns AS run_peak_timestamp_ns
  FROM peak_allocations AS p
  JOIN runs AS r ON r.run_id = p.run_id
  LEFT JOIN spans AS s ON s.run_id = p.run_id AND s.span_index = p.span_index;
CREATE VIEW nsight_kernels AS
  SELECT run_id, row_index, name, category, total_ns, count, average_ns, minimum_ns, maximum_ns
  FROM nsight_summary WHERE section = 'kernels';
)sql";

// The keys (run_id, *_index), in kIndicesInLoadOrder below, lead with the run, so they also serve
// a run's rows in order. The lookup indices of the large tables lead with the looked-up column and
// end with run_id: a join on both columns uses them as well either way, a lookup without run_id can
// use them too, and SQLite builds them about a third faster, because sorting keys that all start
// with the same run_id text takes a full record comparison for every pair. Not indexed: the
// timeline and the peak allocations (read whole per run, in rowid order), names (GROUP BY sorts
// anyway).
constexpr std::string_view kIndices[] = {
    "CREATE INDEX IF NOT EXISTS spans_by_id ON spans (span_id, run_id)",
    "CREATE INDEX IF NOT EXISTS spans_by_parent ON spans (parent_index, run_id)",
    "CREATE INDEX IF NOT EXISTS ops_by_span ON ops (span_index, run_id)",
    "CREATE INDEX IF NOT EXISTS ops_by_name ON ops (op_name, run_id)",
    "CREATE INDEX IF NOT EXISTS ops_by_node ON ops (node_id, run_id)",
    "CREATE INDEX IF NOT EXISTS ops_by_correlation ON ops (correlation, run_id)",
    "CREATE INDEX IF NOT EXISTS kernels_by_correlation ON kernels (correlation, run_id)",
    "CREATE INDEX IF NOT EXISTS kernels_by_launcher ON kernels (launch_op_index, run_id)",
    "CREATE INDEX IF NOT EXISTS kernels_by_span ON kernels (span_index, run_id)",
    "CREATE UNIQUE INDEX IF NOT EXISTS gpu_devices_key ON gpu_devices (run_id, device)",
    "CREATE INDEX IF NOT EXISTS gpu_streams_by_device ON gpu_streams (run_id, device)",
    "CREATE INDEX IF NOT EXISTS op_inputs_by_tensor ON op_inputs (tensor_id, run_id)",
    "CREATE INDEX IF NOT EXISTS tensors_by_id ON tensors (tensor_id, run_id)",
    "CREATE INDEX IF NOT EXISTS memory_events_by_tensor ON memory_events (tensor_id, run_id)",
    "CREATE INDEX IF NOT EXISTS memory_events_by_span ON memory_events (span_index, run_id)",
    "CREATE INDEX IF NOT EXISTS edges_by_from ON edges (from_id, run_id)",
    "CREATE INDEX IF NOT EXISTS edges_by_to ON edges (to_id, run_id)",
    "CREATE INDEX IF NOT EXISTS gradients_by_key ON gradients (root, key, run_id)",
    "CREATE INDEX IF NOT EXISTS run_tags_by_run ON run_tags (run_id, key)",
    "CREATE INDEX IF NOT EXISTS health_issues_by_run ON health_issues (run_id)",
    "CREATE INDEX IF NOT EXISTS findings_by_run ON findings (run_id)",
    "CREATE INDEX IF NOT EXISTS facts_by_run ON facts (run_id, code)",
    "CREATE INDEX IF NOT EXISTS gaps_by_run ON gaps (run_id)",
    "CREATE INDEX IF NOT EXISTS nsight_summary_by_run ON nsight_summary (run_id, section)",
    "CREATE INDEX IF NOT EXISTS nsight_timeline_by_run ON nsight_timeline (run_id, section)",
};

// The indices whose rows arrive in key order (the loader writes a run's rows in *_index order, and
// op_inputs in op order): kept up to date during the load, each row lands at the right edge of
// the tree, which costs less than building them afterwards (a scan of the table and a sort each).
constexpr std::string_view kIndicesInLoadOrder = R"sql(
CREATE UNIQUE INDEX IF NOT EXISTS spans_key ON spans (run_id, span_index);
CREATE UNIQUE INDEX IF NOT EXISTS ops_key ON ops (run_id, op_index);
CREATE UNIQUE INDEX IF NOT EXISTS tensors_key ON tensors (run_id, tensor_index);
CREATE UNIQUE INDEX IF NOT EXISTS memory_events_key ON memory_events (run_id, event_index);
CREATE UNIQUE INDEX IF NOT EXISTS kernels_key ON kernels (run_id, kernel_index);
CREATE INDEX IF NOT EXISTS op_inputs_by_op ON op_inputs (op_index, run_id);
)sql";

// True when the database `schema_name` has the columns device work and ranks added to sql/1 (the
// `kernels` table, `ops.op_kind`, the `rank` columns): rows are copied and appended positionally,
// so an earlier layout of the same schema name cannot take them.
bool has_device_columns(const Connection& db, std::string_view schema_name) {
  Statement probe(
      db,
      "SELECT (SELECT COUNT(*) FROM pragma_table_info('kernels', ?1)) > 0 AND "
      "(SELECT COUNT(*) FROM pragma_table_info('gpu_devices', ?1)) > 0 AND "
      "(SELECT COUNT(*) FROM pragma_table_info('ops', ?1) WHERE name = 'op_kind') > 0 "
      "AND (SELECT COUNT(*) FROM pragma_table_info('ops', ?1) WHERE name = 'rank') > 0");
  probe.bind_text(1, schema_name, /*stable=*/false);
  return probe.step() && sqlite3_column_int(probe.get(), 0) == 1;
}

}  // namespace

std::span<const std::string_view> table_names() noexcept {
  return std::span<const std::string_view>(kTableNames.data(), kTableNames.size() - 1);
}

void create_schema(const Connection& db) {
  db.exec(std::string(kTables));
  db.exec(std::string(kViews));
  db.exec(std::string(kIndicesInLoadOrder));
  Statement row(db, "INSERT INTO schema (name, created_by) VALUES (?1, ?2)");
  row.bind_text(1, kSqlSchema);
  row.bind_text(2, std::string_view("candle-graph " CG_VERSION));
  row.run();
}

namespace {

// The table an index statement of kIndices builds on (the word after " ON ").
std::string_view indexed_table(std::string_view create) {
  const std::size_t on = create.find(" ON ") + 4;
  return create.substr(on, create.find(' ', on) - on);
}

// A table's rows: its largest rowid, since the loader only appends (no table scan).
std::uint64_t table_rows(const Connection& db, std::string_view table) {
  Statement rows(db, "SELECT max(rowid) FROM " + std::string(table));
  return rows.step() ? static_cast<std::uint64_t>(sqlite3_column_int64(rows.get(), 0)) : 0;
}

}  // namespace

void create_indices(const Connection& db, const StepProgress& progress) {
  // An index build sorts in memory up to the cache's size, and beyond it writes sorted runs to
  // temporary files and merges them. 24 MiB holds the largest index of a 100 MB trace (edges,
  // 466,000 rows). Set only now, after the load, the cache does not grow while the tables are
  // written, and the peak RSS (while the analysis runs) stays where it was.
  db.exec("PRAGMA cache_size = -24576");
  db.exec(std::string(kIndicesInLoadOrder));  // no-ops unless the database predates them
  // Progress in rows indexed: an index costs about what its table's rows cost to sort.
  std::vector<std::uint64_t> rows;
  std::uint64_t total = 0, done = 0;
  if (progress) {
    for (std::string_view create : kIndices)
      total += rows.emplace_back(table_rows(db, indexed_table(create)));
    if (total > 0) progress("indices", 0, total);
  }
  for (std::size_t i = 0; i < std::size(kIndices); ++i) {
    db.exec(std::string(kIndices[i]));
    if (progress && total > 0) progress("indices", done += rows[i], total);
  }
  release_sorter_memory();  // the sort buffer the index builds shared
}

void check_schema(const Connection& db, std::string_view schema_name, const std::string& path) {
  const std::string quoted = "\"" + std::string(schema_name) + "\"";
  sqlite3_stmt* raw = nullptr;
  const std::string sql = "SELECT name FROM " + quoted + ".schema";
  std::string found;
  if (sqlite3_prepare_v2(db.get(), sql.c_str(), -1, &raw, nullptr) == SQLITE_OK &&
      sqlite3_step(raw) == SQLITE_ROW) {
    const unsigned char* text = sqlite3_column_text(raw, 0);
    if (text) found = reinterpret_cast<const char*>(text);
  }
  sqlite3_finalize(raw);
  if (found != kSqlSchema)
    throw Error(path, 0,
                found.empty() ? "not a candle-graph database (no `schema` table naming " +
                                    std::string(kSqlSchema) + ")"
                              : "database schema is " + found + ", this build reads " +
                                    std::string(kSqlSchema));
  if (!has_device_columns(db, schema_name))
    throw Error(path, 0,
                "database has an earlier layout of " + std::string(kSqlSchema) +
                    " (no `kernels` table, no `ops.op_kind` or no `rank` columns); export its "
                    "traces again to add runs to it or merge it");
}

}  // namespace candle_graph::sqlite
