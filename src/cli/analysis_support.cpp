#include "cli/analysis_support.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <system_error>
#include <thread>

#include "bundle/bundle_input.hpp"
#include "candle_graph/import.hpp"
#include "cli/command.hpp"
#include "cli/standard_output.hpp"
#include "evidence/packet_builder.hpp"
#include "export/pipelined_sink.hpp"
#include "output/atomic_file.hpp"
#include "output/output_group.hpp"

namespace candle_graph::cli {

namespace {

std::optional<bundle::BundleInput> bundle_input_of(const std::filesystem::path& path) {
  if (!bundle::is_bundle_dir(path)) return std::nullopt;
  // One verification per bundle and process, however many times a command asks.
  static std::map<std::filesystem::path, bundle::BundleInput> verified;
  const auto it = verified.find(path);
  if (it != verified.end()) return it->second;
  return verified.emplace(path, bundle::open_verified_bundle(path)).first->second;
}

}  // namespace

namespace {

// A regular file's size; 0 for anything else (a pipe, a missing path).
std::uint64_t file_bytes(const std::filesystem::path& path) {
  std::error_code ec;
  const std::uint64_t bytes = std::filesystem::file_size(path, ec);
  return ec ? 0 : bytes;
}

}  // namespace

std::uint64_t trace_bytes(const std::filesystem::path& path) {
  const auto in = bundle_input_of(path);
  return file_bytes(in ? in->trace : path);
}

ImportOptions import_options(std::string_view step, const std::string& label) {
  ImportOptions options;
  options.progress = progress_on_stderr(label);
  options.converting = write_progress_on_stderr("converting " + label, file_bytes(label));
  options.threads = read_threads();
  if (step == "all") {
    options.all_steps = true;
  } else if (!step.empty()) {
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(step.data(), step.data() + step.size(), n);
    if (ec != std::errc() || end != step.data() + step.size())
      throw UsageError("--step takes a profiler step number (ProfilerStep#N) or `all`, not `" +
                       std::string(step) + "`");
    options.step = n;
  }
  return options;
}

TraceDocument load_trace(const std::filesystem::path& path, std::string_view step) {
  const auto in = bundle_input_of(path);
  const std::filesystem::path& file = in ? in->trace : path;
  return import_trace(file, import_options(step, file.string())).document;
}

void add_step_option(CLI::App* cmd, std::string& step) {
  cmd->add_option("--step", step,
                  "PyTorch traces: measure ProfilerStep#N, or `all` steps as one region "
                  "(default: the last complete step)");
}

namespace {
std::optional<unsigned>& threads_given() {
  static std::optional<unsigned> threads;  // one command per process
  return threads;
}
}  // namespace

void add_threads_option(CLI::App* cmd) {
  cmd->add_option_function<unsigned>(
         "-j,--threads", [](const unsigned& n) { threads_given() = n; },
         "threads that read the trace and format its JSON's large arrays, or, for cohorts of "
         "runs, runs read at once (default: "
         "$CANDLE_GRAPH_THREADS, else the number of cores); the output is the same for any "
         "number")
      ->check(CLI::Range(1u, kMaxReadThreads));
}

unsigned read_threads() {
  if (threads_given()) return *threads_given();
  const char* env = std::getenv("CANDLE_GRAPH_THREADS");
  if (env == nullptr || *env == '\0') return std::max(1u, std::thread::hardware_concurrency());
  const std::string_view text(env);
  unsigned n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n == 0 || n > kMaxReadThreads)
    throw UsageError("CANDLE_GRAPH_THREADS takes a number of threads from 1 to " +
                     std::to_string(kMaxReadThreads) + ", not `" + std::string(text) + "`");
  return n;
}

std::optional<std::filesystem::path> nsight_dir_for(
    const std::filesystem::path& input, const std::optional<std::filesystem::path>& given) {
  if (given) return given;
  const auto in = bundle_input_of(input);
  return in ? in->nsight_dir : std::nullopt;
}

evidence::EvidencePacket build_evidence(const TraceDocument& doc, const TraceDocument* baseline,
                                        const std::optional<std::filesystem::path>& nsight_dir,
                                        const GraphOptions& options) {
  // A bundle's nsight/ directory is named bundle-relative in the evidence, as in its
  // evidence.json, so the packet of a bundle input equals the one it holds.
  std::optional<std::string> label;
  if (nsight_dir && nsight_dir->filename() == "nsight" &&
      bundle::is_bundle_dir(nsight_dir->parent_path()))
    label = "nsight";
  GraphOptions with_threads = options;
  with_threads.threads = read_threads();
  return evidence::build_packet(doc, baseline, nsight_dir, label, with_threads);
}

evidence::EvidencePacket analyse_trace(const TraceDocument& doc, const std::filesystem::path& trace,
                                       const TraceDocument* baseline,
                                       const std::optional<std::filesystem::path>& nsight_dir,
                                       const GraphOptions& options) {
  StageLine line("analysing " + trace.string(), trace_bytes(trace));
  try {
    evidence::EvidencePacket packet = build_evidence(doc, baseline, nsight_dir, options);
    line.done();
    return packet;
  } catch (const Error& e) {
    // The stages know the document, not its file: an untrusted trace's error names it here, as
    // every other error names its file.
    if (!e.path().empty()) throw;
    throw Error(e.kind(), trace.string(), 0, e.message());
  }
}

namespace {

// Counts the large arrays' elements `w` writes on a progress line "writing OUT", when the input
// is large and stderr a terminal; ends the line when the document is written.
class ElementsProgress {
 public:
  ElementsProgress(output::JsonStream& w, std::string_view out,
                   std::initializer_list<std::filesystem::path> inputs, std::uint64_t total)
      : total_(total) {
    if (total_ == 0 || inputs.size() == 0) return;
    line_ = write_progress_on_stderr("writing " + std::string(out), trace_bytes(*inputs.begin()));
    if (!line_) return;
    line_(0, total_);
    w.on_elements_written([this](std::size_t n) { line_(done_ += n, total_); });
  }
  void finish() {
    if (line_) line_(total_, total_);
  }

 private:
  std::uint64_t total_, done_ = 0;
  ProgressCallback line_;
};

}  // namespace

void emit_json(const std::optional<std::filesystem::path>& out,
               std::initializer_list<std::filesystem::path> inputs,
               const std::function<void(output::JsonStream&)>& write, output::OutputGroup* group,
               std::uint64_t large_elements) {
  if (!out || out->empty() || *out == "-") {
    output::JsonStream w(&write_stdout);
    w.set_format_threads(read_threads());
    // A document printed on the terminal itself gets no line drawn into it.
    ElementsProgress progress(w, "<stdout>", inputs,
                              ::isatty(STDOUT_FILENO) == 1 ? 0 : large_elements);
    write(w);
    w.finish();
    flush_stdout();
    progress.finish();
    return;
  }
  for (const auto& in : inputs)
    if (output::same_file(in, *out))
      throw UsageError("refusing to write output over the input file " + in.string());
  std::optional<output::AtomicFile> own;
  output::AtomicFile& file = group ? group->open(*out) : own.emplace(*out);
  // With a second core the file's writes (hundreds of MB for a large trace's evidence, each
  // stage waiting for the disk) run beside the formatting of the next pieces.
  std::optional<exporting::PipelinedSink> pipeline;
  if (read_threads() > 1) pipeline.emplace([&](std::string_view piece) { file.write(piece); });
  output::JsonStream w([&](std::string_view piece) { file.write(piece); });
  // The large arrays' elements are formatted on every reading thread (output/parallel_elements).
  w.set_format_threads(read_threads());
  // The stream's full buffers go to the writing thread whole: copying them there was the
  // formatting thread's largest single cost after the formatting (712 MB for `import` of 295 MB).
  if (pipeline)
    w.set_handover(
        [&](std::string& buffer, std::size_t used) { pipeline->hand_over(buffer, used); });
  ElementsProgress progress(w, out->string(), inputs, large_elements);
  write(w);
  w.finish();
  if (pipeline) pipeline->finish();
  progress.finish();
  if (!group) file.commit();
}

void add_nsight_option(CLI::App* cmd, std::optional<std::filesystem::path>& dir) {
  cmd->add_option("--nsight-dir", dir,
                  "directory of `nsys stats --format csv` reports to add as GPU evidence");
}

std::function<int()> register_packet_command(CLI::App& app, const char* name, const char* help,
                                             const GraphOptions& options, PacketWriter write,
                                             PacketElements count) {
  struct Args {
    std::filesystem::path trace;
    std::optional<std::filesystem::path> output;
    std::optional<std::filesystem::path> nsight_dir;
    std::string step;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(name, help);
  cmd->add_option("TRACE", args->trace, kTraceInputHelp)->required();
  cmd->add_option("-o,--output", args->output, "write the JSON here instead of stdout");
  add_nsight_option(cmd, args->nsight_dir);
  add_step_option(cmd, args->step);
  add_threads_option(cmd);
  return [args, options, write, count] {
    const TraceDocument doc = load_trace(args->trace, args->step);
    const evidence::EvidencePacket packet = analyse_trace(
        doc, args->trace, nullptr, nsight_dir_for(args->trace, args->nsight_dir), options);
    emit_json(
        args->output, {args->trace}, [&](output::JsonStream& w) { write(w, packet); }, nullptr,
        count ? count(packet) : 0);
    return static_cast<int>(kExitOk);
  };
}

}  // namespace candle_graph::cli
