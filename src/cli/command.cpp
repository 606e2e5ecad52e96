#include "cli/command.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>

#include "cli/standard_output.hpp"
#include "output/atomic_file.hpp"
#include "output/output_group.hpp"
#include "output/test_hook.hpp"

namespace candle_graph::cli {

void emit_output(const std::optional<std::filesystem::path>& out, std::string_view text,
                 std::initializer_list<std::filesystem::path> inputs, output::OutputGroup* group) {
  if (!out || out->empty() || *out == "-") {
    write_stdout(text);
    flush_stdout();
    return;
  }
  for (const auto& in : inputs)
    if (output::same_file(in, *out))
      throw UsageError("refusing to write output over the input file " + in.string());
  if (group)
    group->open(*out).write(text);
  else
    output::write_file_atomic(*out, text);
}

// Progress lines are for a person watching a long command: only on a terminal, and only for
// inputs large enough to take a while (64 MiB; tests lower it to see the lines on small inputs).
bool progress_wanted(std::uint64_t input_bytes) {
  static const bool tty = ::isatty(STDERR_FILENO) == 1;
  return tty &&
         input_bytes >= output::size_from_env("CANDLE_GRAPH_TEST_PROGRESS_BYTES", 64ull << 20);
}

namespace {

// Whether a progress line was drawn and not ended: what is printed next starts a line of its own.
// Readers draw from their threads, one at a time.
std::atomic<bool> line_open{false};

// What a progress line shows last: it is redrawn only when that changes, and ended once. Shared
// by the callback's copies (readers hand theirs on).
struct ShownLine {
  std::uint64_t shown = ~std::uint64_t{0};
  bool ended = false;
  // False when `value` is what the line shows already; true when the caller draws it now.
  bool change(std::uint64_t value) {
    if (ended || value == shown) return false;
    shown = value;
    line_open = true;
    return true;
  }
  void end_when(bool done) {
    if (!done) return;
    ended = true;
    line_open = false;
    std::fputc('\n', stderr);
  }
};

}  // namespace

void end_open_progress_line() {
  if (!line_open.exchange(false)) return;
  std::fputc('\n', stderr);
}

StageLine::StageLine(std::string what, std::uint64_t input_bytes)
    : what_(std::move(what)), shown_(progress_wanted(input_bytes)) {
  if (!shown_) return;
  end_open_progress_line();
  std::fprintf(stderr, "%s ...", what_.c_str());
  std::fflush(stderr);
  line_open = true;
}

void StageLine::done() {
  if (!shown_ || !line_open) return;
  std::fprintf(stderr, "\r%s: done\n", what_.c_str());
  std::fflush(stderr);
  line_open = false;
  shown_ = false;
}

StageLine::~StageLine() {
  if (shown_) end_open_progress_line();
}

ProgressCallback progress_on_stderr(std::string label) {
  auto line = std::make_shared<ShownLine>();
  return [label = std::move(label), line](std::uint64_t done, std::uint64_t total) {
    // Keyed on the MiB shown and on being done, so that the end is drawn even in the last MiB.
    if (!progress_wanted(total) || !line->change((done >> 20) * 2 + (done >= total ? 1 : 0)))
      return;
    std::fprintf(stderr, "\rreading %s: %3d%% (%llu of %llu MiB)", label.c_str(),
                 static_cast<int>(std::min(done, total) * 100 / total),
                 static_cast<unsigned long long>(done >> 20),
                 static_cast<unsigned long long>(total >> 20));
    line->end_when(done >= total);
    std::fflush(stderr);
  };
}

ProgressCallback write_progress_on_stderr(std::string what, std::uint64_t input_bytes) {
  if (!progress_wanted(input_bytes)) return {};
  // Redrawn when the whole percentage changes: callers report often (every batch of rows).
  auto line = std::make_shared<ShownLine>();
  return [what = std::move(what), line](std::uint64_t done, std::uint64_t total) {
    if (total == 0) return;
    const std::uint64_t percent = std::min(done, total) * 100 / total;
    if (!line->change(percent)) return;
    std::fprintf(stderr, "\r%s: %3d%%", what.c_str(), static_cast<int>(percent));
    line->end_when(percent == 100);
    std::fflush(stderr);
  };
}

// Each step of the database write on a progress line of its own: "WHAT (STEP):  45%".
sqlite::StepProgress database_progress(std::string what, std::uint64_t input_bytes) {
  if (!progress_wanted(input_bytes)) return {};
  return [what = std::move(what), input_bytes, step = std::string(), line = ProgressCallback()](
             std::string_view s, std::uint64_t done, std::uint64_t total) mutable {
    if (s != step || !line) {
      step = s;
      line = write_progress_on_stderr(what + step + ")", input_bytes);
    }
    line(done, total);
  };
}

}  // namespace candle_graph::cli
