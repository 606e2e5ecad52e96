#include "support/evidence_helpers.hpp"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "evidence/evidence_json.hpp"
#include "support/files.hpp"
#include "support/run_program.hpp"
#include "support/temp_dir.hpp"

namespace cg_test {

std::string fixture_path(const std::string& name) {
  return std::string(CG_FIXTURE_DIR) + "/evidence/" + name;
}

candle_graph::TraceDocument load_fixture(const std::string& name) {
  return candle_graph::parse_trace(fixture_path(name));
}

std::string read_file(const std::string& path) {
  return candle_graph::testing::read_file(path);
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

// `args` as a shell would split them (the tests quote paths with spaces).
RunResult run_cli(const std::string& args) {
  const candle_graph::testing::RunResult r = candle_graph::testing::run_program(
      {"/bin/sh", "-c", std::string("exec '") + CG_BINARY + "' " + args});
  return {r.exit_code, r.out, r.err};
}

}  // namespace cg_test
