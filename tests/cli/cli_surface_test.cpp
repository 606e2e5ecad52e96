// The command-line surface: --help on every command, --version,
// usage errors exit 2, and `synth` writing valid, trusted, deterministic traces.
#include <gmock/gmock.h>
#include <nlohmann/json.hpp>

#include <set>
#include <sstream>

#include "cli_test_support.hpp"

namespace {

using namespace cgcli;
using ::testing::HasSubstr;

// The subcommand names listed by `candle-graph --help` (CLI11 prints them two spaces in,
// one per entry, under "Subcommands:"), so commands added later are covered automatically.
std::vector<std::string> listed_subcommands() {
  const RunResult r = run_cli({"--help"});
  std::vector<std::string> names;
  std::istringstream in(r.out);
  std::string line;
  bool in_section = false;
  while (std::getline(in, line)) {
    if (line.rfind("Subcommands:", 0) == 0 || line.rfind("SUBCOMMANDS:", 0) == 0) {
      in_section = true;
      continue;
    }
    // "  name   description": two spaces, then a lowercase name (std::regex is avoided: GCC 12
    // warns inside <regex> under the sanitizer build).
    if (!in_section || line.size() < 3 || line.compare(0, 2, "  ") != 0) continue;
    if (line[2] < 'a' || line[2] > 'z') continue;
    names.push_back(line.substr(2, line.find(' ', 2) - 2));
  }
  return names;
}

TEST(CliSurface, TopLevelHelp) {
  const RunResult r = run_cli({"--help"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("validate"));
  EXPECT_THAT(r.out, HasSubstr("synth"));
  EXPECT_EQ(run_cli({"-h"}).exit_code, 0);
}

TEST(CliSurface, HelpOnEveryCommand) {
  const std::vector<std::string> names = listed_subcommands();
  EXPECT_THAT(names, ::testing::IsSupersetOf({"validate", "synth"}));
  for (const auto& name : names) {
    SCOPED_TRACE(name);
    for (const char* flag : {"--help", "-h"}) {
      const RunResult r = run_cli({name, flag});
      EXPECT_EQ(r.exit_code, 0) << describe(r);
      EXPECT_THAT(r.out, HasSubstr(name));
      EXPECT_THAT(r.out, HasSubstr("Usage"));
    }
  }
}

TEST(CliSurface, VersionNamesTheTraceSchema) {
  const RunResult r = run_cli({"--version"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("candle-graph/trace/6"));
  EXPECT_THAT(r.out, ::testing::StartsWith("candle-graph "));
}

TEST(CliSurface, UsageErrorsExitTwo) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {},
           {"--bogus"},
           {"no-such-command"},
           {"validate", "--bogus", "x.jsonl"},
           {"synth", "--layers", "3"},                     // -o missing
           {"synth", "-o", "x.jsonl"},                     // --layers missing
           {"synth", "--layers", "0", "-o", "x.jsonl"},    // out of range
           {"synth", "--layers", "abc", "-o", "x.jsonl"},  // not a number
           {"synth", "--layers", "-3", "-o", "x.jsonl"},
           {"synth", "--layers", "2", "--ops-per-span", "0", "-o", "x.jsonl"},
           {"synth", "--layers", "2", "--seed", "x", "-o", "x.jsonl"},
       }) {
    SCOPED_TRACE(::testing::PrintToString(args));
    TempDir dir;
    const RunResult r = run_cli(args, dir.path());
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_NE(r.err, "");
    EXPECT_TRUE(dir.entries().empty()) << "a usage error wrote a file";
  }
}

TEST(CliSurface, SynthWritesATrustedTrace) {
  TempDir dir;
  const RunResult s = run_cli(
      {"synth", "--layers", "8", "--ops-per-span", "2", "--seed", "5", "-o", "out/trace.jsonl"},
      dir.path());
  EXPECT_EQ(s.exit_code, 0) << describe(s);
  EXPECT_EQ(s.out, "");
  ASSERT_TRUE(fs::exists(dir / "out" / "trace.jsonl"));
  const RunResult v = run_cli({"validate", "out/trace.jsonl", "--require-trusted"}, dir.path());
  EXPECT_EQ(v.exit_code, 0) << describe(v);
  const auto j = nlohmann::json::parse(v.out);
  EXPECT_EQ(j["health"]["trusted"], true);
  EXPECT_TRUE(j["health"]["issues"].empty());
  EXPECT_EQ(j["health"]["coverage"]["gradients"], 8);
  // Every gradient state of trace6.md §3 appears with 8 layers.
  std::set<std::string> states;
  std::istringstream lines(read_file(dir / "out" / "trace.jsonl"));
  std::string line;
  while (std::getline(lines, line)) {
    const auto e = nlohmann::json::parse(line);
    if (e["kind"] == "gradient") states.insert(e["state"]);
  }
  EXPECT_EQ(states, (std::set<std::string>{"present", "missing", "zero", "non_finite"}));
}

TEST(CliSurface, SynthIsDeterministicForASeed) {
  TempDir dir;
  for (const char* name : {"a.jsonl", "b.jsonl"})
    ASSERT_EQ(run_cli({"synth", "--layers", "5", "--seed", "11", "-o", name}, dir.path()).exit_code,
              0);
  ASSERT_EQ(
      run_cli({"synth", "--layers", "5", "--seed", "12", "-o", "c.jsonl"}, dir.path()).exit_code,
      0);
  EXPECT_EQ(read_file(dir / "a.jsonl"), read_file(dir / "b.jsonl"));
  EXPECT_NE(read_file(dir / "a.jsonl"), read_file(dir / "c.jsonl"));
  // Overwriting an existing file replaces it whole; no temporary files are left.
  ASSERT_EQ(
      run_cli({"synth", "--layers", "5", "--seed", "12", "-o", "a.jsonl"}, dir.path()).exit_code,
      0);
  EXPECT_EQ(read_file(dir / "a.jsonl"), read_file(dir / "c.jsonl"));
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"a.jsonl", "b.jsonl", "c.jsonl"}));
}

TEST(CliSurface, SynthIntoAnUnwritablePlaceExitsOne) {
  TempDir dir;
  write_file(dir / "file", "x");
  const RunResult r = run_cli({"synth", "--layers", "2", "-o", "file/trace.jsonl"}, dir.path());
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_THAT(r.err, ::testing::StartsWith("error: file/trace.jsonl"));
}

}  // namespace
