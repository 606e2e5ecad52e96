// `candle-graph view TRACE -o viewer.html [--baseline B] [--nsight-dir D]` (trace6.md §11, §12):
// one self-contained HTML file. `--payload FILE` renders a prepared candle-graph/viewer/4 JSON
// payload instead of a trace (front-end fixtures and tools).
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "candle_graph/error.hpp"
#include "cli/analysis_support.hpp"
#include "cli/command.hpp"
#include "compare/comparison_parts.hpp"
#include "viewer/html_document.hpp"
#include "viewer/viewer_payload.hpp"

namespace candle_graph::cli {
namespace {

struct ViewOptions {
  std::filesystem::path trace;
  std::filesystem::path output;
  std::optional<std::filesystem::path> baseline;
  std::optional<std::filesystem::path> nsight_dir;
  std::optional<std::filesystem::path> payload;
  std::string step;
};

std::string read_payload(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string(), 0, "cannot open the viewer payload");
  std::ostringstream text;
  text << in.rdbuf();
  // The payload is written out again below, which recurses once per level of nesting: a million
  // levels overflowed the stack. A viewer payload nests a few levels.
  constexpr int kMaxDepth = 512;
  using Event = nlohmann::json::parse_event_t;
  const auto bounded = [&](int depth, Event event, nlohmann::json&) {
    // `depth` counts the containers around this one: the outermost is at 0.
    if ((event == Event::object_start || event == Event::array_start) && depth >= kMaxDepth)
      throw Error(path.string(), 0,
                  "the payload nests deeper than " + std::to_string(kMaxDepth) + " levels");
    return true;
  };
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(text.str(), bounded);
  } catch (const nlohmann::json::exception& e) {
    // Also a number beyond a double (`1e999`), an out_of_range error rather than a parse_error.
    throw Error(path.string(), 0, std::string("invalid JSON: ") + e.what());
  }
  const auto schema = value.is_object() ? value.find("schema") : value.end();
  if (schema == value.end() || !schema->is_string() ||
      schema->get_ref<const std::string&>() != viewer::kViewerSchema)
    throw Error(
        path.string(), 0,
        "not a " + std::string(viewer::kViewerSchema) + " payload (wrong or missing schema)");
  return value.dump();  // compact, as embedded by the original
}

}  // namespace

Runner register_view(CLI::App& app) {
  auto opts = std::make_shared<ViewOptions>();
  CLI::App* cmd = app.add_subcommand(
      "view",
      "Write one self-contained HTML viewer (candle-graph/viewer/4) of a trusted trace: Evidence,\n"
      "Trace graph, Timeline, Operators (per op name), Kernels (when the trace has device work),\n"
      "Span costs, Memory and GPU views. Opens from disk, makes no network request.\n"
      "Example: candle-graph view trace.jsonl -o viewer.html");
  auto* trace = cmd->add_option("TRACE", opts->trace, kTraceInputHelp)->check(CLI::ExistingPath);
  cmd->add_option("-o,--output", opts->output, "HTML file to write")->required();
  cmd->add_option("--baseline", opts->baseline, "baseline trace (or bundle) for the comparison")
      ->check(CLI::ExistingPath);
  cmd->add_option("--nsight-dir", opts->nsight_dir, "directory of `nsys stats` CSV reports");
  add_step_option(cmd, opts->step);
  add_threads_option(cmd);
  auto* payload = cmd->add_option("--payload", opts->payload,
                                  "render this viewer/4 JSON payload instead of a trace")
                      ->check(CLI::ExistingFile);
  trace->excludes(payload);
  return [opts] {
    std::string html;
    if (opts->payload) {
      html = viewer::render_evidence_html(read_payload(*opts->payload));
    } else if (!opts->trace.empty()) {
      const TraceDocument doc = load_trace(opts->trace, opts->step);
      std::optional<TraceDocument> baseline;
      if (opts->baseline) {
        baseline = load_trace(*opts->baseline, opts->step);
        evidence::check_span_keys_fit(*baseline, opts->baseline->string());
        evidence::check_span_keys_fit(doc, opts->trace.string());
      }
      const evidence::EvidencePacket packet =
          analyse_trace(doc, opts->trace, baseline ? &*baseline : nullptr,
                        nsight_dir_for(opts->trace, opts->nsight_dir));
      html = rendered("the viewer " + opts->output.string(), opts->trace,
                      [&] { return viewer::render_evidence_html(viewer::project(packet)); });
    } else {
      throw UsageError("view needs a TRACE (or --payload FILE)");
    }
    if (opts->payload)
      emit_output(opts->output, html, {*opts->payload});
    else if (opts->baseline)
      emit_output(opts->output, html, {opts->trace, *opts->baseline});
    else
      emit_output(opts->output, html, {opts->trace});
    return kExitOk;
  };
}

}  // namespace candle_graph::cli
