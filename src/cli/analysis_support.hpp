// Shared plumbing of the analysis commands (import, summary, query, compare, report): reading a
// trace with progress, assembling the packet, and streaming JSON to stdout or an atomic file.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>

#include "candle_graph/importer.hpp"
#include "candle_graph/trace.hpp"
#include "cli/command.hpp"
#include "evidence/evidence_packet.hpp"
#include "output/json_stream.hpp"

namespace candle_graph::output {
class OutputGroup;
}  // namespace candle_graph::output

namespace candle_graph::cli {

// What a command's TRACE argument may be, for its --help.
inline constexpr const char* kTraceInputHelp =
    "trace/6 JSONL, a PyTorch profiler trace (Kineto or legacy JSON, plain or .gz), "
    "candle-graph's Chrome export, or a verified bundle directory";

// Reads a trace of any format the registry knows (candle_graph/import.hpp), with progress.
// `path` may be a bundle directory: it is verified first (Error when it does not verify) and its
// trace.jsonl is read. `step` is the --step argument: "", a number or "all".
TraceDocument load_trace(const std::filesystem::path& path, std::string_view step = {});

// The size of the file load_trace reads for `path` (a bundle's trace), 0 when it has none (a
// pipe): what decides whether a long step shows progress.
std::uint64_t trace_bytes(const std::filesystem::path& path);

// A page or document rendered in memory before it is written (`render()`), on a progress line of
// its own, "rendering WHAT ..." then "rendering WHAT: done", when the trace is large: at 300 MB
// the viewer takes a noticeable fraction of a second after the analysis's line has ended.
template <typename Render>
std::string rendered(const std::string& what, const std::filesystem::path& trace, Render render) {
  StageLine line("rendering " + what, trace_bytes(trace));
  std::string text = render();
  line.done();
  return text;
}

// The import options of a --step argument (UsageError when it is neither a number nor `all`),
// with progress lines for the input `label` names (its size decides whether they show).
ImportOptions import_options(std::string_view step, const std::string& label);

// Registration of `--step N|all`.
void add_step_option(CLI::App* cmd, std::string& step);

// Registration of `-j,--threads N`: how many threads read the trace.
void add_threads_option(CLI::App* cmd);
// The threads a trace is read with: -j, else $CANDLE_GRAPH_THREADS, else the number of cores
// (UsageError when the variable is not a number from 1 to kMaxReadThreads).
unsigned read_threads();
inline constexpr unsigned kMaxReadThreads = 256;

// The Nsight directory to use for `input`: `given` when set, else a bundle input's nsight/.
std::optional<std::filesystem::path> nsight_dir_for(
    const std::filesystem::path& input, const std::optional<std::filesystem::path>& given);

// trace6.md §9.2 build_evidence over parsed documents: the optional baseline comparison, the GPU
// evidence (trace6.md §10.2 load_optional) and the packet. Throws on an untrusted trace.
evidence::EvidencePacket build_evidence(const TraceDocument& doc, const TraceDocument* baseline,
                                        const std::optional<std::filesystem::path>& nsight_dir,
                                        const GraphOptions& options = {});

// build_evidence for a command that reads one `trace` and analyses it next: on a terminal, a
// large trace's analysis shows as the line "analysing TRACE ..." (cli/command.hpp StageLine).
evidence::EvidencePacket analyse_trace(const TraceDocument& doc, const std::filesystem::path& trace,
                                       const TraceDocument* baseline,
                                       const std::optional<std::filesystem::path>& nsight_dir,
                                       const GraphOptions& options = {});

// Streams a JSON document (plus the trailing newline) to stdout or atomically to `out`,
// refusing to write over any of `inputs` (UsageError). Nothing is left behind on failure. With a
// `group`, the file lands with the group's commit. `large_elements` is how many elements `write`
// writes as large arrays (output::write_elements): when the first input is large, a terminal
// shows "writing OUT:  45%" over them.
void emit_json(const std::optional<std::filesystem::path>& out,
               std::initializer_list<std::filesystem::path> inputs,
               const std::function<void(output::JsonStream&)>& write,
               output::OutputGroup* group = nullptr, std::uint64_t large_elements = 0);

// Registration of the CLI11 option `--nsight-dir DIR`.
void add_nsight_option(CLI::App* cmd, std::optional<std::filesystem::path>& dir);

// The commands that turn one trace into one packet document (`import`, `summary`):
// `NAME TRACE [-o FILE] [--nsight-dir DIR]`, the packet built with `options`, then streamed with
// `write` to stdout or atomically to FILE.
// `count` says how many large-array elements `write` writes (none when it is null).
using PacketWriter = void (*)(output::JsonStream&, const evidence::EvidencePacket&);
using PacketElements = std::uint64_t (*)(const evidence::EvidencePacket&);
std::function<int()> register_packet_command(CLI::App& app, const char* name, const char* help,
                                             const GraphOptions& options, PacketWriter write,
                                             PacketElements count = nullptr);

}  // namespace candle_graph::cli
