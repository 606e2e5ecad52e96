// What every command file shares: exit codes, output routing and error reporting. Only cli/
// knows about argv, stdout/stderr and exit codes.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "candle_graph/error.hpp"
#include "candle_graph/trace_io.hpp"
#include "sqlite/step_progress.hpp"

namespace candle_graph::output {
class OutputGroup;
}  // namespace candle_graph::output

namespace candle_graph::cli {

enum ExitCode : int { kExitOk = 0, kExitRuntime = 1, kExitUsage = 2, kExitUntrusted = 3 };

// A registered subcommand: its CLI11 node and what to run when it was chosen.
using Runner = std::function<int()>;

Runner register_validate(CLI::App& app);
Runner register_synth(CLI::App& app);
Runner register_import(CLI::App& app);
Runner register_summary(CLI::App& app);
Runner register_query(CLI::App& app);
Runner register_compare(CLI::App& app);
Runner register_report(CLI::App& app);
Runner register_view(CLI::App& app);
Runner register_export(CLI::App& app);   // export_command.cpp (formats: export_*_command.cpp)
Runner register_convert(CLI::App& app);  // convert_command.cpp
Runner register_sql(CLI::App& app);      // sql_command.cpp
Runner register_verify(CLI::App& app);   // verify_command.cpp
Runner register_ranks(CLI::App& app);    // ranks_command.cpp

// `export TRACE... --format F -o OUT`: what the export command parsed, handed to the format's
// runner (one file per format).
struct ExportArgs {
  std::vector<std::filesystem::path> traces;
  std::string format;
  std::filesystem::path output;
  std::optional<std::filesystem::path> nsight_dir;
  bool append = false;  // sqlite: add runs to an existing database
  std::string step;     // --step of PyTorch traces
};
int run_export_chrome(const ExportArgs& args);  // export_chrome_command.cpp
int run_export_sqlite(const ExportArgs& args);  // export_sqlite_command.cpp

// Writes `text` to `out` atomically, or to stdout when `out` is empty. Refuses to write over any
// of `inputs` (exit code 2 via UsageError). With a `group`, the file lands with the group's
// commit (output/output_group.hpp).
void emit_output(const std::optional<std::filesystem::path>& out, std::string_view text,
                 std::initializer_list<std::filesystem::path> inputs,
                 output::OutputGroup* group = nullptr);

// A usage problem found after parsing (e.g. the output would overwrite the input): exit 2.
struct UsageError : Error {
  explicit UsageError(std::string message) : Error(ErrorKind::usage, {}, 0, std::move(message)) {}
};

// Progress of long work on stderr, only when stderr is a terminal and the input is 64 MiB or
// more (progress_wanted): one line redrawn in place and ended when the step is done.
bool progress_wanted(std::uint64_t input_bytes);
// Reading, in bytes of the input: "reading LABEL:  45% (128 of 281 MiB)".
ProgressCallback progress_on_stderr(std::string label);
// Writing the output of an input of `input_bytes`, as a share of the writer's own units (rows,
// events): "WHAT:  45%" ("writing runs.db (indices):  45%"). Empty, so that the writer need not
// count, when no line would show.
ProgressCallback write_progress_on_stderr(std::string what, std::uint64_t input_bytes);
// A step with nothing to count (the analysis of a trace), shown as the progress lines are:
// "WHAT ..." while it runs, redrawn as "WHAT: done" by done(). Left without done() (the step
// threw), the line is ended so that the error starts a line of its own.
class StageLine {
 public:
  StageLine(std::string what, std::uint64_t input_bytes);
  StageLine(const StageLine&) = delete;
  StageLine& operator=(const StageLine&) = delete;
  ~StageLine();
  void done();

 private:
  std::string what_;
  bool shown_;
};
// Ends a progress line left open (an error interrupted its step), so that what is printed next
// starts a line of its own.
void end_open_progress_line();
// The steps of a database load, each on a line of its own: "WHAT (STEP):  45%"; `what` ends with
// " (" or with a prefix of the step inside the brackets ("writing runs.db (run 2 of 3, ").
sqlite::StepProgress database_progress(std::string what, std::uint64_t input_bytes);

}  // namespace candle_graph::cli
