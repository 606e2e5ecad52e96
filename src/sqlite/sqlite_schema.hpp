// The candle-graph/sql/1 database layout: tables, join-key indices and the views for common
// questions. docs/sql.md describes every table and column; change both together (and the schema
// name when a column changes meaning).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "sqlite/sqlite_handle.hpp"
#include "sqlite/step_progress.hpp"

namespace candle_graph::sqlite {

inline constexpr std::string_view kSqlSchema = "candle-graph/sql/1";

// Every table, in creation order (the `schema` table first).
std::span<const std::string_view> table_names() noexcept;

// Creates the tables and views and the `schema` row in an empty database, with the indices whose
// rows a load writes in key order. The others are separate (create_indices, after the load):
// building them once after a bulk load is cheaper than keeping them up to date row by row.
void create_schema(const Connection& db);
// `progress` (when set) hears step "indices": the rows indexed out of all the indices' rows,
// after each index.
void create_indices(const Connection& db, const StepProgress& progress = {});

// Throws Error naming `path` unless the database `schema_name` ("main", or an attached one)
// holds a `schema` table naming kSqlSchema and the tables and columns this build appends to
// (a database of the same schema name written before device work was added has fewer).
void check_schema(const Connection& db, std::string_view schema_name, const std::string& path);

}  // namespace candle_graph::sqlite
