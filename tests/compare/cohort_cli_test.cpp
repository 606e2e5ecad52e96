// `candle-graph compare --baseline … --candidate …` through the built binary,
// on cohorts of `synth` runs: a known 10 % slowdown is judged slower, the same distribution is
// inconclusive, 4 runs a side are insufficient, paired and independent resampling, and the
// eligibility reasons duplicate_run_id, identity_conditions_differ, untrusted_input and
// unverified_inputs.
//
// The cohorts: `synth --layers 3 --ops-per-span 2 --jitter 3` with one --noise-seed per run, i.e.
// every duration scaled by a log-normal run factor with sigma 3 % (plus per-duration noise), and
// --time-scale 1.1 for the slowed-down candidates. With 6 runs a side the interval of the ratio
// of means is about ±5 points wide, so 10 % lies clearly outside 0 and the same distribution
// clearly includes it. The seeds are fixed, so the outcome is too; a different draw could in
// principle miss (a 95 % interval misses 1 time in 20), which is why the slowdown is 10 % and
// not 3 %.
#include <nlohmann/json.hpp>

#include <map>

#include "cli/cli_test_support.hpp"

namespace {

using cgcli::run_cli;
using Json = nlohmann::json;
namespace fs = std::filesystem;

class CohortCli : public ::testing::Test {
 protected:
  // ctest runs every test in its own process, so the runs are made on first use, not up front.
  static void SetUpTestSuite() { dir_ = new cgcli::TempDir("cg-cohort"); }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  static void synth(const std::string& name, std::vector<std::string> extra) {
    std::vector<std::string> args = {"synth",    "--layers", "3",  "--ops-per-span", "2",
                                     "--jitter", "3",        "-o", path(name)};
    args.insert(args.end(), extra.begin(), extra.end());
    const cgcli::RunResult r = run_cli(args);
    ASSERT_EQ(r.exit_code, 0) << cgcli::describe(r);
  }
  static std::string path(const std::string& name) { return (*dir_ / (name + ".jsonl")).string(); }
  // Run i of a cohort: base (the baseline), slow (10 % slower), same (the baseline's
  // distribution), pbase / pslow (base / slow with pair_id tags p1…p6), build (build_id=new).
  static std::string run(const std::string& stem, int i) {
    const std::string n = std::to_string(i), name = stem + n;
    if (fs::exists(path(name))) return path(name);
    const std::map<std::string, std::pair<int, std::vector<std::string>>> cohorts = {
        {"base", {0, {}}},
        {"slow", {100, {"--time-scale", "1.1"}}},
        {"same", {200, {}}},
        {"pbase", {300, {"--tag", "pair_id=p" + n}}},
        {"pslow", {400, {"--time-scale", "1.1", "--tag", "pair_id=p" + n}}},
        {"build", {950, {"--tag", "build_id=new"}}}};
    const auto& [seed_base, extra] = cohorts.at(stem);
    std::vector<std::string> args = {"--noise-seed", std::to_string(seed_base + i), "--run-id",
                                     stem + "-" + n};
    args.insert(args.end(), extra.begin(), extra.end());
    synth(name, args);
    return path(name);
  }
  // Runs 1…n of a cohort as arguments.
  static std::vector<std::string> runs(const std::string& stem, int n) {
    std::vector<std::string> out;
    for (int i = 1; i <= n; ++i) out.push_back(run(stem, i));
    return out;
  }
  static cgcli::RunResult compare(const std::vector<std::string>& baseline,
                                  const std::vector<std::string>& candidate,
                                  const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"compare", "--baseline"};
    args.insert(args.end(), baseline.begin(), baseline.end());
    args.push_back("--candidate");
    args.insert(args.end(), candidate.begin(), candidate.end());
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args);
  }
  static Json parse(const cgcli::RunResult& r) {
    EXPECT_EQ(r.exit_code, 0) << cgcli::describe(r);
    return Json::parse(r.out);
  }
  static std::vector<std::string> codes(const Json& doc) {
    std::vector<std::string> out;
    for (const Json& r : doc["eligibility"]["reasons"]) out.push_back(r["code"]);
    return out;
  }

  static inline cgcli::TempDir* dir_ = nullptr;
};

TEST_F(CohortCli, KnownSlowdownIsJudgedSlower) {
  const Json doc = parse(compare(runs("base", 6), runs("slow", 6)));
  EXPECT_EQ(doc["schema"], "candle-graph/comparison/2");
  EXPECT_TRUE(doc["eligibility"]["eligible"]) << doc["eligibility"].dump();
  EXPECT_EQ(doc["verdict"], "slower");
  EXPECT_EQ(doc["bootstrap"]["pairing"], "independent");
  EXPECT_EQ(doc["bootstrap"]["resamples"], 10000);
  EXPECT_EQ(doc["bootstrap"]["confidence"], 0.95);
  EXPECT_NE(doc["statistic"].get<std::string>().find("ratio of the mean measured totals"),
            std::string::npos);
  const Json& t = doc["measured_total"];
  // The interval lies above 0 and contains the 10 % put in (--time-scale 1.1).
  EXPECT_GT(t["interval_percent"]["low"].get<double>(), 0);
  EXPECT_LT(t["interval_percent"]["low"].get<double>(), 10);
  EXPECT_GT(t["interval_percent"]["high"].get<double>(), 10);
  // The point estimate is the ratio of the listed runs' means.
  double b = 0, c = 0;
  for (const Json& r : doc["baseline_runs"]) b += r["measured_total_ns"].get<double>();
  for (const Json& r : doc["candidate_runs"]) c += r["measured_total_ns"].get<double>();
  EXPECT_NEAR(t["delta_percent"].get<double>(), (c / b - 1) * 100, 1e-9);
  // Memory is not touched by timing: the same peak in every run.
  EXPECT_EQ(doc["peak_memory"]["delta_bytes"], 0.0);
  EXPECT_EQ(doc["peak_memory"]["verdict"], "unchanged");
  // Span keys: 3 layers × 2 module spans + region + 3 steps = 10 keys, every one slower.
  EXPECT_EQ(doc["span_keys"], 10);
  ASSERT_EQ(doc["spans"].size(), 10u);
  EXPECT_GT(doc["spans"][0]["delta_ns"].get<double>(), 0);
  EXPECT_NE(doc["spans"][0]["name"].get<std::string>().find("[function]"), std::string::npos);
  EXPECT_TRUE(doc["spans"][0]["interval_percent"].is_object());
  EXPECT_EQ(doc["gradient_changes"], 0);
  // A threshold above the slowdown makes it inconclusive (faster/slower need the whole interval
  // beyond it).
  const Json lenient = parse(compare(runs("base", 6), runs("slow", 6), {"--threshold", "25"}));
  EXPECT_EQ(lenient["verdict"], "inconclusive");
  EXPECT_EQ(lenient["threshold_percent"], 25.0);
  // Swapped, the candidate is faster.
  EXPECT_EQ(parse(compare(runs("slow", 6), runs("base", 6)))["verdict"], "faster");
}

TEST_F(CohortCli, SameDistributionIsInconclusive) {
  const Json doc = parse(compare(runs("base", 6), runs("same", 6)));
  EXPECT_TRUE(doc["eligibility"]["eligible"]);
  EXPECT_EQ(doc["verdict"], "inconclusive");
  EXPECT_LT(doc["measured_total"]["interval_percent"]["low"].get<double>(), 0);
  EXPECT_GT(doc["measured_total"]["interval_percent"]["high"].get<double>(), 0);
}

TEST_F(CohortCli, FourRunsAreInsufficient) {
  const cgcli::RunResult r = compare(runs("base", 4), runs("slow", 4));
  const Json doc = parse(r);
  EXPECT_FALSE(doc["eligibility"]["eligible"]);
  EXPECT_EQ(codes(doc), (std::vector<std::string>{"insufficient_runs", "insufficient_runs"}));
  EXPECT_NE(doc["eligibility"]["reasons"][0]["message"].get<std::string>().find("4 usable runs"),
            std::string::npos);
  // Not eligible: the numbers are there, the verdict claims nothing.
  EXPECT_EQ(doc["verdict"], "inconclusive");
  EXPECT_TRUE(doc["measured_total"]["interval_percent"].is_object());
  // --require-eligible: the same document, exit 3.
  const cgcli::RunResult gated = compare(runs("base", 4), runs("slow", 4), {"--require-eligible"});
  EXPECT_EQ(gated.exit_code, 3) << cgcli::describe(gated);
  EXPECT_EQ(gated.out, r.out);
  // Five a side is enough.
  const cgcli::RunResult five = compare(runs("base", 5), runs("slow", 5), {"--require-eligible"});
  EXPECT_EQ(five.exit_code, 0) << cgcli::describe(five);
}

TEST_F(CohortCli, PairedWhenEveryRunHasAPairId) {
  // Candidates given in reverse order: they are matched by pair_id, not by position.
  std::vector<std::string> cand = runs("pslow", 6);
  std::reverse(cand.begin(), cand.end());
  const Json doc = parse(compare(runs("pbase", 6), cand));
  EXPECT_TRUE(doc["eligibility"]["eligible"]) << doc["eligibility"].dump();
  EXPECT_EQ(doc["bootstrap"]["pairing"], "paired");
  EXPECT_EQ(doc["verdict"], "slower");
  EXPECT_TRUE(doc["warnings"].empty()) << doc["warnings"].dump();
  for (std::size_t i = 0; i < 6; ++i)
    EXPECT_EQ(doc["baseline_runs"][i]["pair_id"], doc["candidate_runs"][i]["pair_id"]);
  // Paired and independent resampling give different intervals on the same runs.
  const Json mixed = parse(compare(runs("pbase", 6), runs("slow", 6)));
  EXPECT_EQ(mixed["bootstrap"]["pairing"], "independent");
  ASSERT_EQ(mixed["warnings"].size(), 1u);
  EXPECT_NE(mixed["warnings"][0].get<std::string>().find("6 of 12 runs carry a `pair_id`"),
            std::string::npos);
  // All tagged but not one to one (p6 missing on the candidate side, p1 twice): independent.
  std::vector<std::string> skewed = runs("pslow", 5);
  skewed.push_back(run("pslow", 1));
  const Json broken = parse(compare(runs("pbase", 6), skewed));
  EXPECT_EQ(broken["bootstrap"]["pairing"], "independent");
  EXPECT_NE(broken["warnings"].dump().find("one to one"), std::string::npos);
  // …and pslow1 twice is a duplicate run id.
  EXPECT_EQ(codes(broken), std::vector<std::string>{"duplicate_run_id"});
}

TEST_F(CohortCli, DuplicateRunIdsAcrossCohorts) {
  // base1 compared with itself: the same run id on both sides.
  std::vector<std::string> cand = runs("slow", 5);
  cand.push_back(run("base", 1));
  const Json doc = parse(compare(runs("base", 6), cand));
  EXPECT_EQ(codes(doc), std::vector<std::string>{"duplicate_run_id"});
  const std::string msg = doc["eligibility"]["reasons"][0]["message"];
  EXPECT_NE(msg.find("`base-1` occurs 2 times"), std::string::npos) << msg;
  EXPECT_EQ(doc["verdict"], "inconclusive");
}

TEST_F(CohortCli, IdentityConditionsMustAgreeDescriptiveTagsMayDiffer) {
  // A workload tag (batch) on one candidate: identity_conditions_differ naming it.
  synth("batch", {"--noise-seed", "900", "--run-id", "batch-64", "--tag", "batch=64"});
  std::vector<std::string> cand = runs("slow", 5);
  cand.push_back(path("batch"));
  const Json doc = parse(compare(runs("base", 6), cand));
  EXPECT_EQ(codes(doc), std::vector<std::string>{"identity_conditions_differ"});
  const std::string msg = doc["eligibility"]["reasons"][0]["message"];
  EXPECT_NE(msg.find("workload tags differ"), std::string::npos) << msg;
  EXPECT_NE(msg.find("batch=64"), std::string::npos) << msg;
  EXPECT_NE(msg.find("1 of 12 runs"), std::string::npos) << msg;
  // Another structure seed is another workload (the `seed` tag differs).
  synth("seed2", {"--seed", "2", "--run-id", "seed-2"});
  cand.back() = path("seed2");
  EXPECT_EQ(codes(parse(compare(runs("base", 6), cand))),
            std::vector<std::string>{"identity_conditions_differ"});
  // A descriptive tag (build_id) that differs between the cohorts is only a warning.
  const Json ok = parse(compare(runs("base", 5), runs("build", 5)));
  EXPECT_TRUE(ok["eligibility"]["eligible"]) << ok["eligibility"].dump();
  EXPECT_NE(ok["warnings"].dump().find("descriptive `build_id` differs"), std::string::npos);
}

TEST_F(CohortCli, UntrustedAndUnverifiedInputs) {
  // Untrusted: the root span's end (the last line) cut off, so the root is never closed.
  std::string text = cgcli::read_file(run("slow", 6));
  text.pop_back();
  text.erase(text.rfind('\n') + 1);
  cgcli::write_file(path("open6"), text);
  std::vector<std::string> cand = runs("slow", 5);
  cand.push_back(path("open6"));
  const Json doc = parse(compare(runs("base", 6), cand));
  EXPECT_EQ(codes(doc), std::vector<std::string>{"untrusted_input"});
  EXPECT_NE(doc["eligibility"]["reasons"][0]["message"].get<std::string>().find("open6"),
            std::string::npos);
  EXPECT_FALSE(doc["candidate_runs"][5]["trusted"]);
  // A directory is taken as an evidence bundle; one that cannot be verified is reported and not
  // counted as a run (so the candidate side is down to 5).
  const fs::path bogus = *dir_ / "not-a-bundle";
  fs::create_directories(bogus);
  cand.back() = bogus.string();
  const Json unv = parse(compare(runs("base", 6), cand));
  EXPECT_EQ(codes(unv), std::vector<std::string>{"unverified_inputs"});
  EXPECT_EQ(unv["candidate_runs"].size(), 5u);
  EXPECT_NE(unv["eligibility"]["reasons"][0]["message"].get<std::string>().find("not-a-bundle"),
            std::string::npos);
  // A trace file that cannot be read is an error, not a reason.
  cand.back() = path("does-not-exist");
  const cgcli::RunResult missing = compare(runs("base", 6), cand);
  EXPECT_EQ(missing.exit_code, 1) << cgcli::describe(missing);
  EXPECT_NE(missing.err.find("does-not-exist"), std::string::npos);
}

TEST_F(CohortCli, DeterministicPerSeedAndWrittenAtomically) {
  const cgcli::RunResult a = compare(runs("base", 6), runs("same", 6), {"--seed", "9"});
  const cgcli::RunResult b = compare(runs("base", 6), runs("same", 6), {"--seed", "9"});
  EXPECT_EQ(a.out, b.out);
  const cgcli::RunResult c = compare(runs("base", 6), runs("same", 6), {"--seed", "10"});
  EXPECT_NE(a.out, c.out);
  const cgcli::RunResult few =
      compare(runs("base", 6), runs("same", 6), {"--seed", "9", "--resamples", "2000"});
  EXPECT_EQ(parse(few)["bootstrap"]["resamples"], 2000);
  // -o writes the same document; an input as output is refused (exit 2).
  const std::string out = (*dir_ / "cohort.json").string();
  const cgcli::RunResult written =
      compare(runs("base", 6), runs("same", 6), {"--seed", "9", "-o", out});
  EXPECT_EQ(written.exit_code, 0) << cgcli::describe(written);
  EXPECT_EQ(cgcli::read_file(out), a.out);
  const cgcli::RunResult over = compare(runs("base", 6), runs("same", 6), {"-o", run("base", 1)});
  EXPECT_EQ(over.exit_code, 2) << cgcli::describe(over);
}

// Runs are read several at a time (`-j`); they are reduced in the order given, so the document
// is byte for byte the one-at-a-time document (span and parameter names are numbered as runs
// arrive), and the error is the first failing input's in that order, whichever thread failed
// first. The reference is `-j 1`, which reads them one after another.
TEST_F(CohortCli, ReadingSeveralRunsAtOnceChangesNothing) {
  std::vector<std::string> cand = runs("slow", 5);
  const fs::path bundle_like = *dir_ / "not-a-bundle-either";
  fs::create_directories(bundle_like);
  cand.push_back(bundle_like.string());  // a directory among the files, read on its turn
  const cgcli::RunResult one = compare(runs("base", 6), cand, {"-j", "1"});
  ASSERT_EQ(one.exit_code, 0) << cgcli::describe(one);
  for (const char* threads : {"2", "3", "8"}) {
    const cgcli::RunResult many = compare(runs("base", 6), cand, {"-j", threads});
    EXPECT_EQ(many.exit_code, 0) << cgcli::describe(many);
    EXPECT_EQ(many.out, one.out) << "-j " << threads;
  }
  // Two unreadable inputs: the error names the earlier one, as one at a time would.
  std::vector<std::string> broken = runs("base", 6);
  broken[1] = path("missing-first");
  broken[4] = path("missing-second");
  for (const char* threads : {"1", "3"}) {
    const cgcli::RunResult r = compare(broken, runs("slow", 6), {"-j", threads});
    EXPECT_EQ(r.exit_code, 1) << cgcli::describe(r);
    EXPECT_NE(r.err.find("missing-first"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("missing-second"), std::string::npos) << r.err;
  }
}

TEST_F(CohortCli, OneToOneFormUnchangedAndFormsDoNotMix) {
  const cgcli::RunResult one = run_cli({"compare", run("base", 1), run("slow", 1)});
  EXPECT_EQ(parse(one)["schema"], "candle-graph/comparison/1");
  auto usage = [](const std::vector<std::string>& args) {
    const cgcli::RunResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << cgcli::describe(r);
  };
  usage({"compare", run("base", 1)});
  usage({"compare", run("base", 1), run("slow", 1), "--threshold", "2"});
  usage({"compare", "--baseline", run("base", 1)});
  usage({"compare", "--candidate", run("base", 1)});
  usage({"compare", run("base", 1), "--baseline", run("base", 2), "--candidate", run("slow", 1)});
  usage({"compare", "--baseline", run("base", 1), "--candidate", run("slow", 1), "--resamples",
         "10"});
  usage({"compare", "--baseline", run("base", 1), "--candidate", run("slow", 1), "--threshold",
         "-1"});
}

}  // namespace
