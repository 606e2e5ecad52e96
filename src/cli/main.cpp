// candle-graph: argv → one subcommand → exit code. 0 ok, 1 runtime error, 2 usage error,
// 3 untrusted trace where a command was asked to require trust.
#include <sys/resource.h>

#include <cstdio>
#include <exception>
#include <limits>
#include <map>
#include <string>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "candle_graph/error.hpp"
#include "candle_graph/trace.hpp"
#include "cli/command.hpp"
#include "cli/standard_output.hpp"
#include "output/interrupt_cleanup.hpp"
#include "output/visible_text.hpp"
#include "output/write_guard.hpp"

namespace {

// `code`, unless what was printed (help, the version) could not be written: then exit 1 with
// the reason, as for any other output.
int with_stdout_written(int code) {
  try {
    candle_graph::cli::flush_stdout();
  } catch (const candle_graph::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return candle_graph::cli::kExitRuntime;
  }
  return code;
}

// An error's message on stderr. Messages quote the trace (names, ids), so their control
// characters are shown as escapes; without the memory for that copy, the message as it is.
void print_error(const char* what) {
  try {
    std::fprintf(stderr, "error: %s\n", candle_graph::output::visible_text(what).c_str());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "error: %s\n", what);
  }
}

// The message for memory that could not be had: the command and its inputs (the positional
// arguments), and the address-space limit when one is set (`ulimit -v`), the usual cause when
// the machine itself has memory to spare.
std::string out_of_memory_message(const CLI::App& command) {
  std::string inputs;
  for (const CLI::Option* opt : command.get_options()) {
    if (!opt->get_positional()) continue;
    for (const std::string& value : opt->results()) inputs += (inputs.empty() ? "" : ", ") + value;
  }
  std::string text = "out of memory in `" + command.get_name() + "`";
  if (!inputs.empty()) text += " on " + inputs;
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    text += " (the address-space limit, `ulimit -v`, is " + std::to_string(limit.rlim_cur >> 20) +
            " MiB)";
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace candle_graph;
  using namespace candle_graph::cli;
  // First, before any thread starts (they inherit the blocked signals): Ctrl-C and the like then
  // remove the temporary files of unfinished outputs before the process ends.
  output::watch_interrupts();
#if defined(__GLIBC__)
  // A fixed 1 MiB mmap threshold. glibc raises its threshold each time a large block is freed
  // (up to 32 MiB), so later arrays of a few MiB come from the heap and stay resident after they
  // are freed: `export --format chrome` of a 295 MB trace peaked 10 MB higher that way
  // (docs/performance.md, "Chrome export").
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  // No trimming of the heap's free top: glibc hands it back to the kernel whenever 128 KiB are
  // free there, and the next allocation faults those pages in again, zeroed. In one
  // `export --format chrome` 40% of the page faults were such second faults of the same pages;
  // a command gains nothing from returning memory early: it exits when done, and those that read
  // many traces (`ranks`, cohort `compare`) read them one after another into the same memory.
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
#endif
  CLI::App app{
      "candle-graph: execution evidence for one ML training update or inference call.\n"
      "Reads candle-graph/trace/6 JSONL traces (written by the C++, LibTorch, Python or Rust\n"
      "probes) and PyTorch profiler traces (Kineto or legacy, plain or .gz) directly, and tells\n"
      "whether they can be trusted and what the run actually did, on the host and the GPU."};
  app.set_version_flag("--version", std::string("candle-graph ") + CG_VERSION +
                                        " (reads and writes " + std::string(kTraceSchema) + ")");
  app.require_subcommand(1);
  app.fallthrough(false);
  std::map<CLI::App*, Runner> runners;
  auto add = [&](Runner r) { runners[app.get_subcommands({}).back()] = std::move(r); };
  add(register_validate(app));
  add(register_synth(app));
  add(register_import(app));
  add(register_summary(app));
  add(register_query(app));
  add(register_compare(app));
  add(register_report(app));
  add(register_view(app));
  add(register_export(app));
  add(register_convert(app));
  add(register_sql(app));
  add(register_verify(app));
  add(register_ranks(app));

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return with_stdout_written(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return with_stdout_written(app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    return with_stdout_written(app.exit(e));
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  const CLI::App* running = nullptr;
  try {
    for (auto& [sub, run] : runners) {
      if (!sub->parsed()) continue;
      running = sub;
      const int code = run();
      // Whatever a command left in stdout's buffer, and any write to it that failed unseen.
      flush_stdout();
      return code;
    }
    return kExitUsage;
  } catch (const Error& e) {
    end_open_progress_line();
    print_error(e.what());
    return e.kind() == ErrorKind::usage ? kExitUsage : kExitRuntime;
  } catch (const std::bad_alloc&) {
    end_open_progress_line();
    // Built in a string of its own, which may fail too: then the bare words.
    try {
      std::fprintf(stderr, "error: %s\n",
                   running ? out_of_memory_message(*running).c_str() : "out of memory");
    } catch (const std::bad_alloc&) {
      std::fputs("error: out of memory\n", stderr);
    }
    return kExitRuntime;
  } catch (const std::exception& e) {
    end_open_progress_line();
    print_error(e.what());
    return kExitRuntime;
  }
}
