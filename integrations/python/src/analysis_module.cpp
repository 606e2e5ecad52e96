// candle_graph._analysis: the analysis half of the Python package, for notebooks. It binds the
// same C++ library the command line runs (the importer registry, the evidence packet, its JSON
// and Markdown writers, the SQL stage) and hands Python the very documents `candle-graph query`,
// `summary`, `import` and `sql` print, as JSON text; candle_graph/analysis.py only parses and
// shapes them. No torch here: this module loads into any Python 3 without it.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bundle/bundle_input.hpp"
#include "candle_graph/error.hpp"
#include "candle_graph/import.hpp"
#include "evidence/evidence_json.hpp"
#include "evidence/packet_builder.hpp"
#include "evidence/report_digest.hpp"
#include "import/registry/convert.hpp"
#include "output/json_stream.hpp"
#include "sql/query_database.hpp"
#include "sql/query_runner.hpp"
#include "sql/result_format.hpp"

namespace py = pybind11;
namespace cg = candle_graph;
namespace fs = std::filesystem;

namespace {

// What the CLI's `--step` takes: nothing (the importer's choice), a step number, or every step.
cg::ImportOptions import_options(const std::optional<std::uint64_t>& step, bool all_steps) {
  cg::ImportOptions options;
  options.step = step;
  options.all_steps = all_steps;
  return options;
}

std::string json_of(const std::function<void(cg::output::JsonStream&)>& write) {
  std::string text;
  cg::output::JsonStream w([&](std::string_view piece) { text += piece; },
                           cg::output::JsonStyle::compact);
  write(w);
  w.finish();
  return text;
}

// One trace read once, as the CLI reads its TRACE argument (a bundle directory is verified and
// its trace read; its nsight/ directory is GPU evidence), and its evidence packet built on first
// use. The document outlives the packet, which holds views into it.
class LoadedTrace {
 public:
  LoadedTrace(const fs::path& path, std::optional<std::uint64_t> step, bool all_steps) {
    fs::path file = path;
    if (cg::bundle::is_bundle_dir(path)) {
      const cg::bundle::BundleInput in = cg::bundle::open_verified_bundle(path);
      file = in.trace;
      nsight_dir_ = in.nsight_dir;
    }
    cg::ImportedTrace imported = cg::import_trace(file, import_options(step, all_steps));
    document_ = std::make_unique<cg::TraceDocument>(std::move(imported.document));
    report_ = std::move(imported.report);
  }

  const std::string& format() const { return report_.format; }
  const std::string& measured() const { return report_.measured; }

  std::string query(const std::string& kind_name, std::size_t limit) {
    const auto kind = cg::evidence::parse_query_kind(kind_name);
    if (!kind) throw py::value_error("unknown query kind \"" + kind_name + "\"");
    return json_of([&](cg::output::JsonStream& w) {
      cg::evidence::write_query_document(w, packet(), *kind, limit);
    });
  }
  std::string summary() {
    return json_of(
        [&](cg::output::JsonStream& w) { cg::evidence::write_summary_document(w, packet()); });
  }
  std::string evidence() {
    return json_of(
        [&](cg::output::JsonStream& w) { cg::evidence::write_evidence_packet(w, packet()); });
  }
  std::string report_markdown() { return cg::evidence::render_report(packet()); }

  const cg::TraceDocument& document() const { return *document_; }

 private:
  const cg::evidence::EvidencePacket& packet() {
    if (!packet_) {
      // As the CLI names a bundle's Nsight files: bundle-relative.
      std::optional<std::string> label;
      if (nsight_dir_) label = "nsight";
      packet_ = std::make_unique<cg::evidence::EvidencePacket>(
          cg::evidence::build_packet(*document_, nullptr, nsight_dir_, label));
    }
    return *packet_;
  }

  std::unique_ptr<cg::TraceDocument> document_;
  cg::ImportReport report_;
  std::optional<fs::path> nsight_dir_;
  std::unique_ptr<cg::evidence::EvidencePacket> packet_;
};

// The database of `candle-graph sql SOURCE...`, built from the sources as the command builds it.
cg::sql::QueryDatabase open_sql_sources(const std::vector<fs::path>& sources) {
  if (sources.size() == 1 && cg::sql::is_sqlite_file(sources[0]))
    return cg::sql::QueryDatabase::open_file(sources[0]);
  cg::sql::QueryDatabase db = cg::sql::QueryDatabase::in_memory();
  for (const auto& source : sources) {
    if (cg::sql::is_sqlite_file(source)) {
      db.add_database(source);
      continue;
    }
    const cg::TraceDocument doc = cg::import_trace(source).document;
    try {
      db.add_run(doc, source.string(),
                 [&] { return cg::evidence::build_packet(doc, nullptr, std::nullopt, {}); });
    } catch (const cg::Error& e) {
      if (e.path().empty() || e.path() == ":memory:")
        throw cg::Error(source.string(), 0, e.message());
      throw;
    }
  }
  db.finish_loading();
  return db;
}

// `candle-graph sql SOURCE... STATEMENT --format json --limit N`: the candle-graph/sql-result/1
// document (no limit: every row).
std::string run_sql(const std::vector<fs::path>& sources, const std::string& statement,
                    std::optional<std::uint64_t> limit, double timeout_seconds) {
  if (sources.empty()) throw py::value_error("sql needs at least one trace or database");
  cg::sql::QueryDatabase db = open_sql_sources(sources);
  std::string json;
  const auto sink = cg::sql::json_result([&](std::string_view piece) { json += piece; }, limit);
  cg::sql::run_query(db.connection(), statement,
                     cg::sql::QueryOptions{.limit = limit, .timeout_seconds = timeout_seconds},
                     *sink);
  return json;
}

// `candle-graph convert INPUT -o OUTPUT [--step N|all]`, for the profiler engine: what the
// conversion counted, as a dict.
py::dict convert(const fs::path& input, const fs::path& output, std::optional<std::uint64_t> step,
                 bool all_steps) {
  const cg::import::ConvertResult r =
      cg::import::convert_pytorch_trace(input, output, import_options(step, all_steps));
  py::dict d;
  d["format"] = r.format;
  d["measured"] = r.measured;
  d["source_events"] = r.source_events;
  d["spans"] = r.spans;
  d["ops"] = r.ops;
  d["device_ops"] = r.device_ops;
  d["memory_events"] = r.memory_events;
  py::dict repairs;
  for (const auto& [reason, count] : r.repairs) repairs[py::str(reason)] = count;
  d["repairs"] = repairs;
  return d;
}

}  // namespace

PYBIND11_MODULE(_analysis, m) {
  m.doc() =
      "Native part of candle_graph's analysis API (use candle_graph.load and candle_graph.sql)";
  // The library's errors name the file (and the line or byte offset): OSError for files that
  // cannot be read or written, TraceError (a ValueError) for every other kind. A local
  // translator: the capture module's, registered later, would otherwise see them first.
  static py::exception<cg::Error> trace_error(m, "TraceError", PyExc_ValueError);
  // pybind11 takes a plain function pointer of exactly this signature.
  // NOLINTNEXTLINE(performance-unnecessary-value-param)
  py::register_local_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const cg::Error& e) {
      PyObject* type = e.kind() == cg::ErrorKind::io ? PyExc_OSError : trace_error.ptr();
      PyErr_SetString(type, e.what());
    }
  });
  py::class_<LoadedTrace>(m, "LoadedTrace")
      // Reading a large trace takes seconds: other Python threads run meanwhile. The methods
      // keep the GIL (they fill the trace's packet on first use).
      .def(py::init<const fs::path&, std::optional<std::uint64_t>, bool>(), py::arg("path"),
           py::arg("step"), py::arg("all_steps"), py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("format", &LoadedTrace::format)
      .def_property_readonly("measured", &LoadedTrace::measured)
      .def("query", &LoadedTrace::query, py::arg("kind"), py::arg("limit"))
      .def("summary", &LoadedTrace::summary)
      .def("evidence", &LoadedTrace::evidence)
      .def("report_markdown", &LoadedTrace::report_markdown);
  m.def("sql", &run_sql, py::arg("sources"), py::arg("statement"), py::arg("limit"),
        py::arg("timeout_seconds"), py::call_guard<py::gil_scoped_release>());
  m.def("convert", &convert, py::arg("input"), py::arg("output"), py::arg("step"),
        py::arg("all_steps"));
}
