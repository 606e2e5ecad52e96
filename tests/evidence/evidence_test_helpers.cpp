#include "evidence_test_helpers.hpp"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "evidence/evidence_json.hpp"
#include "support/temp_dir.hpp"

namespace cg_test {

std::string fixture_path(const std::string& name) {
  return std::string(CG_FIXTURE_DIR) + "/evidence/" + name;
}

candle_graph::TraceDocument load_fixture(const std::string& name) {
  return candle_graph::parse_trace(fixture_path(name));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

nlohmann::ordered_json packet_json(const candle_graph::evidence::EvidencePacket& p) {
  candle_graph::output::JsonStream w;
  candle_graph::evidence::write_evidence_packet(w, p);
  w.finish();
  return nlohmann::ordered_json::parse(w.take());
}

std::string meta_line(const std::string& overrides) {
  nlohmann::ordered_json m = nlohmann::ordered_json::parse(
      R"({"kind":"meta","schema":"candle-graph/trace/6","run_id":"run-1","correlation_id":"c",
          "entrypoint":"session","phase":"train","timestamp":"2026-01-01T00:00:00.000Z",
          "capture_step":1,"warmup_steps":0,"device":"cpu",
          "measured_region_device_synchronized":false,"timing_mode":"host",
          "tags":{"batch":"8"}})");
  m.update(nlohmann::ordered_json::parse(overrides));
  return m.dump() + "\n";
}

RunResult run_cli(const std::string& args) {
  static int counter = 0;
  // One directory per test process, removed when the process exits.
  static const candle_graph::testing::TempDir temp("cg_evidence_cli");
  const std::filesystem::path& dir = temp.path();
  const auto out = dir / ("out" + std::to_string(counter) + ".txt");
  const auto err = dir / ("err" + std::to_string(counter++) + ".txt");
  const std::string cmd = std::string("'") + CG_BINARY + "' " + args + " >'" + out.string() +
                          "' 2>'" + err.string() + "'";
  const int status = std::system(cmd.c_str());
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out.string());
  r.err = read_file(err.string());
  return r;
}

}  // namespace cg_test
