// The CLI tests' names for the shared support: files, fixtures, temp dirs and run_cli.
#pragma once

#include "support/files.hpp"
#include "support/run_program.hpp"
#include "support/temp_dir.hpp"

namespace cgcli {

namespace fs = std::filesystem;
using candle_graph::testing::describe;
using candle_graph::testing::fixture;
using candle_graph::testing::read_file;
using candle_graph::testing::run_cli;
using candle_graph::testing::run_program;
using candle_graph::testing::RunResult;
using candle_graph::testing::TempDir;
using candle_graph::testing::write_file;

}  // namespace cgcli
