// `report --bundle` publishes every file with its size and SHA-256, the
// rendered files equal what `report` and `view` write, an existing destination is refused, and a
// failure injected at any publication step leaves nothing behind.
#include <gmock/gmock.h>

#include <cstdio>
#include <cstdlib>
#include <set>

#include "bundle/bundle_publish.hpp"
#include "bundle/bundle_staging.hpp"
#include "bundle_test_support.hpp"

namespace {

using namespace cgbundle;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// SHA-256 from coreutils' sha256sum: an implementation independent of the OpenSSL code under test.
std::string sha256sum(const fs::path& file) {
  return cgcli::run_program({"/usr/bin/sha256sum", file.string()}).out.substr(0, 64);
}

std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    names.insert(fs::relative(e.path(), dir).generic_string());
  return names;
}

TEST(BundlePublish, WritesEveryFileWithItsSizeAndHash) {
  cgcli::TempDir tmp;
  const Inputs in = make_inputs(tmp.path());
  const fs::path dest = tmp / "out" / "run-1";
  const RunResult r = publish(in, dest);
  ASSERT_EQ(r.exit_code, 0) << cgcli::describe(r);
  EXPECT_THAT(r.err, HasSubstr("manifest sha256 " + sha256sum(dest / "bundle.json")));
  EXPECT_THAT(bundle_files(dest), ElementsAre("baseline.jsonl", "bundle.json", "evidence.json",
                                              "nsight/broken_kern_sum.csv", "nsight/stats.txt",
                                              "report.md", "trace.jsonl", "viewer.html"));
  EXPECT_EQ(read_file(dest / "trace.jsonl"), read_file(in.trace));  // byte for byte
  EXPECT_EQ(read_file(dest / "baseline.jsonl"), read_file(in.baseline));
  EXPECT_EQ(read_file(dest / "nsight/stats.txt"), read_file(in.nsight / "stats.txt"));

  const auto m = nlohmann::json::parse(read_file(dest / "bundle.json"));
  EXPECT_EQ(m["schema"], "candle-graph/bundle/1");
  EXPECT_EQ(m["run_id"], "run-synth-1");  // synth's run id (see `synth` in src/synth)
  EXPECT_EQ(m["schemas"]["trace"], "candle-graph/trace/6");
  EXPECT_EQ(m["schemas"]["evidence"], "candle-graph/evidence/1");
  EXPECT_EQ(m["inputs"]["baseline"], "baseline.jsonl");
  EXPECT_EQ(m["inputs"]["nsight_dir"], "nsight");
  std::vector<std::string> declared;
  for (const auto& f : m["files"]) {
    const std::string path = f["path"];
    declared.push_back(path);
    EXPECT_EQ(f["size"].get<std::uint64_t>(), fs::file_size(dest / path)) << path;
    EXPECT_EQ(f["sha256"], sha256sum(dest / path)) << path;
  }
  std::vector<std::string> expected = bundle_files(dest);
  expected.erase(std::find(expected.begin(), expected.end(), "bundle.json"));
  EXPECT_EQ(declared, expected);  // every file but the manifest, sorted

  // Nothing but the bundle was left next to it (the staging directory is gone).
  EXPECT_EQ(listing(tmp / "out").size(), listing(dest).size() + 1);
  const RunResult v = run_cli({"verify", dest.string()});
  EXPECT_EQ(v.exit_code, 0) << cgcli::describe(v);
  const auto doc = nlohmann::json::parse(v.out);
  EXPECT_EQ(doc["schema"], "candle-graph/bundle-verification/1");
  EXPECT_EQ(doc["verified"], true);
  EXPECT_EQ(doc["files_checked"], 7);
  const RunResult s = run_cli({"verify", dest.string(), "--semantic"});
  EXPECT_EQ(s.exit_code, 0) << cgcli::describe(s);
  // The content address printed at publication pins the manifest.
  const std::string pin = sha256sum(dest / "bundle.json");
  EXPECT_EQ(nlohmann::json::parse(s.out)["manifest_sha256"], pin);
  EXPECT_EQ(run_cli({"verify", dest.string(), "--manifest-sha256", pin}).exit_code, 0);
  std::string other = pin;
  other[0] = other[0] == 'a' ? 'b' : 'a';
  EXPECT_EQ(run_cli({"verify", dest.string(), "--manifest-sha256", other}).exit_code, 1);
  EXPECT_EQ(run_cli({"verify", dest.string(), "--manifest-sha256", "xyz"}).exit_code, 2);
}

// The bundle's rendered files are what `report` and `view` write for the same inputs (with the
// Nsight files read from the bundle, so their paths are bundle-relative in both).
TEST(BundlePublish, RenderedFilesEqualReportAndView) {
  cgcli::TempDir tmp;
  const Inputs in = make_inputs(tmp.path());
  const fs::path dest = tmp / "b";
  ASSERT_EQ(publish(in, dest).exit_code, 0);
  const std::string nsight = (dest / "nsight").string();
  const RunResult r =
      run_cli({"report", in.trace.string(), "--baseline", in.baseline.string(), "--nsight-dir",
               nsight, "--json", (tmp / "e.json").string(), "--markdown", (tmp / "r.md").string()});
  ASSERT_EQ(r.exit_code, 0) << cgcli::describe(r);
  EXPECT_EQ(read_file(dest / "evidence.json"), read_file(tmp / "e.json"));
  EXPECT_EQ(read_file(dest / "report.md"), read_file(tmp / "r.md"));
  const RunResult v = run_cli({"view", in.trace.string(), "--baseline", in.baseline.string(),
                               "--nsight-dir", nsight, "-o", (tmp / "v.html").string()});
  ASSERT_EQ(v.exit_code, 0) << cgcli::describe(v);
  EXPECT_EQ(read_file(dest / "viewer.html"), read_file(tmp / "v.html"));
  // The GPU evidence names the bundle's copies, bundle-relative, and keeps the diagnostic.
  const auto e = nlohmann::json::parse(read_file(dest / "evidence.json"));
  EXPECT_THAT(e["gpu"]["source_csv"].dump(), HasSubstr("\"nsight/stats.txt\""));
  EXPECT_THAT(e["gpu"]["diagnostics"].dump(), HasSubstr("nsight/broken_kern_sum.csv:"));
}

TEST(BundlePublish, WithoutBaselineOrNsightHoldsFiveFiles) {
  cgcli::TempDir tmp;
  const Inputs in = make_inputs(tmp.path());
  const fs::path dest = tmp / "b";
  const RunResult r = publish(in, dest, false, false);
  ASSERT_EQ(r.exit_code, 0) << cgcli::describe(r);
  EXPECT_THAT(bundle_files(dest), ElementsAre("bundle.json", "evidence.json", "report.md",
                                              "trace.jsonl", "viewer.html"));
  const auto m = nlohmann::json::parse(read_file(dest / "bundle.json"));
  EXPECT_TRUE(m["inputs"]["baseline"].is_null());
  EXPECT_TRUE(m["inputs"]["nsight_dir"].is_null());
  EXPECT_EQ(run_cli({"verify", dest.string(), "--semantic"}).exit_code, 0);
  // --json/--markdown may be asked for as well: copies of the bundle's files.
  const RunResult both = run_cli({"report", in.trace.string(), "--bundle", (tmp / "c").string(),
                                  "--json", (tmp / "e.json").string()});
  ASSERT_EQ(both.exit_code, 0) << cgcli::describe(both);
  EXPECT_EQ(read_file(tmp / "e.json"), read_file(tmp / "c" / "evidence.json"));
}

TEST(BundlePublish, ExistingDestinationIsRefused) {
  cgcli::TempDir tmp;
  const Inputs in = make_inputs(tmp.path());
  fs::create_directories(tmp / "empty");
  RunResult r = publish(in, tmp / "empty");
  EXPECT_EQ(r.exit_code, 2) << cgcli::describe(r);
  EXPECT_THAT(r.err, HasSubstr("already exists"));
  EXPECT_TRUE(fs::is_empty(tmp / "empty"));
  write_file(tmp / "file", "keep");
  r = publish(in, tmp / "file");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(read_file(tmp / "file"), "keep");
  // A copy of evidence.json into the new bundle is refused before anything is published.
  r = run_cli({"report", in.trace.string(), "--bundle", (tmp / "d").string(), "--json",
               (tmp / "d" / "e.json").string()});
  EXPECT_EQ(r.exit_code, 2) << cgcli::describe(r);
  EXPECT_FALSE(fs::exists(tmp / "d"));
  // Without --bundle, report needs some output.
  r = run_cli({"report", in.trace.string()});
  EXPECT_EQ(r.exit_code, 2);
}

// Each step of kPublishSteps fails once (CG_BUNDLE_FAIL_AT): exit 1 naming the step, and the
// directory holds exactly what it held before (no bundle, no staging directory, no parent
// directory made for the bundle).
TEST(BundlePublish, FailureAtAnyStepLeavesNothing) {
  cgcli::TempDir tmp;
  const Inputs in = make_inputs(tmp.path());
  const std::set<std::string> before = listing(tmp.path());
  for (const char* step : candle_graph::bundle::kPublishSteps) {
    ::setenv("CG_BUNDLE_FAIL_AT", step, 1);
    const RunResult r = publish(in, tmp / "new" / "b");  // "new" is created, then removed
    ::unsetenv("CG_BUNDLE_FAIL_AT");
    EXPECT_EQ(r.exit_code, 1) << step << "\n" << cgcli::describe(r);
    EXPECT_THAT(r.err, HasSubstr("step \"" + std::string(step) + "\"")) << step;
    EXPECT_EQ(listing(tmp.path()), before) << "after a failure at " << step;
  }
  // The same inputs publish once nothing fails.
  EXPECT_EQ(publish(in, tmp / "new" / "b").exit_code, 0);
}

// A publication killed by SIGKILL (CG_BUNDLE_KILL_AT) cannot clean up: its staging directory
// stays. The next publication of the same bundle removes it, and only it: staging directories of
// another host, of a live process, of another bundle name, or in the old form stay.
TEST(BundlePublish, KilledPublicationIsCleanedUpByTheNext) {
  cgcli::TempDir tmp;
  const Inputs in = make_inputs(tmp.path());
  const std::string host = candle_graph::bundle::staging_host();
  const std::string alive = std::to_string(::getpid());  // this test process
  std::vector<std::string> decoys = {".b.staging-other_host-" + alive + "-aaaaaa",
                                     ".b.staging-" + host + "-" + alive + "-bbbbbb",
                                     ".b.staging-cccccc", ".b.stagingX"};
  for (const auto& d : decoys) fs::create_directories(tmp / d / "inside");

  ::setenv("CG_BUNDLE_KILL_AT", "evidence", 1);
  const RunResult killed = publish(in, tmp / "b");
  ::unsetenv("CG_BUNDLE_KILL_AT");
  EXPECT_EQ(killed.exit_code, -1) << cgcli::describe(killed);  // killed by a signal
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(tmp.path())) {
    const std::string name = e.path().filename().string();
    if (name.rfind(".b.staging-" + host + "-", 0) == 0 && name != decoys[1]) left.push_back(name);
  }
  ASSERT_EQ(left.size(), 1u) << "the killed run's staging directory";
  EXPECT_TRUE(fs::exists(tmp / left[0] / "trace.jsonl"));
  // A dead process of another host stays too (the pid may be alive there).
  decoys.push_back(".b.staging-other_host-" +
                   left[0].substr(left[0].rfind('-', left[0].size() - 8) + 1));
  fs::create_directories(tmp / decoys.back());
  // Another bundle's stale staging directory is that bundle's business.
  decoys.push_back(".c" + left[0].substr(2));
  fs::create_directories(tmp / decoys.back());

  const RunResult r = publish(in, tmp / "b");
  ASSERT_EQ(r.exit_code, 0) << cgcli::describe(r);
  EXPECT_THAT(r.err, HasSubstr("removed " + (tmp / left[0]).string()));
  EXPECT_FALSE(fs::exists(tmp / left[0]));
  for (const auto& d : decoys) EXPECT_TRUE(fs::exists(tmp / d)) << d;
  EXPECT_EQ(run_cli({"verify", (tmp / "b").string()}).exit_code, 0);
}

TEST(BundlePublish, UntrustedTraceLeavesNothing) {
  cgcli::TempDir tmp;
  const RunResult r = run_cli({"report", cgcli::fixture("untrusted_open_root.jsonl").string(),
                               "--bundle", (tmp / "b").string()});
  EXPECT_EQ(r.exit_code, 1) << cgcli::describe(r);
  EXPECT_THAT(r.err, HasSubstr("untrusted_open_root.jsonl"));  // the user's file, not the copy
  EXPECT_TRUE(fs::is_empty(tmp.path()));
}

}  // namespace
