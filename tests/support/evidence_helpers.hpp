// Shared helpers of the evidence, graph and comparison tests: fixtures, JSON of a packet, running
// the CLI.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "candle_graph/trace.hpp"
#include "evidence/evidence_packet.hpp"

namespace cg_test {

std::string fixture_path(const std::string& name);  // tests/fixtures/evidence/<name>
candle_graph::TraceDocument load_fixture(const std::string& name);
std::string read_file(const std::string& path);

// The packet as import writes it, parsed back (ordered, so key order can be checked).
nlohmann::ordered_json packet_json(const candle_graph::evidence::EvidencePacket& p);

// A trusted minimal meta line, with fields overridable by a JSON fragment merged on top.
std::string meta_line(const std::string& overrides = "{}");

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
RunResult run_cli(const std::string& args);  // `candle-graph <args>`

}  // namespace cg_test
