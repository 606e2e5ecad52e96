// `verify` re-hashes every declared file and names each extra, missing,
// changed, symlinked or non-regular one; hostile or broken manifests get findings, never a crash,
// a hang or a read outside the bundle; --semantic rebuilds the evidence and compares it.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle/bundle_verify.hpp"
#include "bundle/sha256.hpp"
#include "bundle_test_support.hpp"

namespace {

using namespace cgbundle;
using candle_graph::bundle::Finding;
using candle_graph::bundle::VerificationResult;
using candle_graph::bundle::verify_bundle;
using ::testing::HasSubstr;

const candle_graph::bundle::VerifyOptions kSemantic{.semantic = true, .manifest_sha256 = {}};

// The manifest entry of `path`.
nlohmann::ordered_json& entry(nlohmann::ordered_json& j, const std::string& path) {
  for (auto& f : j["files"])
    if (f["path"] == path) return f;
  throw std::runtime_error("no manifest entry " + path);
}

// One pristine bundle (trace, baseline, two Nsight files) per suite; each test works on a copy.
class BundleVerify : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = new cgcli::TempDir("cg-bundle");
    const Inputs in = make_inputs(root_->path());
    const RunResult r = publish(in, root_->path() / "pristine");
    ASSERT_EQ(r.exit_code, 0) << cgcli::describe(r);
  }
  static void TearDownTestSuite() {
    delete root_;
    root_ = nullptr;
  }
  void SetUp() override {
    fs::copy(root_->path() / "pristine", dir_, fs::copy_options::recursive);
    ASSERT_TRUE(verify_bundle(dir_, {}).verified);
  }
  static fs::path pristine() { return root_->path() / "pristine"; }

  static bool has(const VerificationResult& r, const std::string& code, const std::string& path) {
    for (const Finding& f : r.findings)
      if (f.code == code && f.path == path) return true;
    return false;
  }
  static std::string codes(const VerificationResult& r) {
    std::string s;
    for (const Finding& f : r.findings) s += f.path + ":" + f.code + " (" + f.message + ")\n";
    return s;
  }

  cgcli::TempDir tmp_;
  fs::path dir_ = tmp_ / "bundle";
  static cgcli::TempDir* root_;
};
cgcli::TempDir* BundleVerify::root_ = nullptr;

TEST_F(BundleVerify, OneFlippedByteInAnyFileFailsNamingIt) {
  for (const std::string& file : bundle_files(dir_)) {
    if (file == "bundle.json") continue;  // its own test below
    const std::size_t size = fs::file_size(dir_ / file);
    for (std::size_t at : {std::size_t{0}, size / 2, size - 1}) {
      flip_byte(dir_ / file, at);
      const VerificationResult r = verify_bundle(dir_, {});
      EXPECT_FALSE(r.verified) << file << " byte " << at;
      EXPECT_TRUE(has(r, "hash_mismatch", file)) << file << " byte " << at << "\n" << codes(r);
      EXPECT_EQ(r.findings.size(), 1u) << codes(r);
      flip_byte(dir_ / file, at);  // restore
    }
  }
  // Through the CLI: exit 1, the finding in the JSON and on stderr.
  flip_byte(dir_ / "report.md", 10);
  const RunResult r = run_cli({"verify", dir_.string()});
  EXPECT_EQ(r.exit_code, 1);
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["verified"], false);
  EXPECT_EQ(doc["findings"][0]["path"], "report.md");
  EXPECT_EQ(doc["findings"][0]["code"], "hash_mismatch");
  EXPECT_THAT(r.err, HasSubstr("report.md: hash_mismatch"));
}

// Every single-byte change of bundle.json fails verification, except inside the tool_version
// value (nothing in the bundle can confirm which tool wrote it): that one is caught by pinning the
// manifest's SHA-256, its content address.
TEST_F(BundleVerify, EveryByteOfTheManifestIsProtected) {
  const fs::path manifest = dir_ / "bundle.json";
  const std::string text = read_file(manifest);
  const std::string pin = verify_bundle(dir_, {}).manifest_sha256.value();
  const std::size_t tool_at = text.find("\"tool_version\": \"") + 17;
  const std::size_t tool_end = text.find('"', tool_at);
  for (std::size_t at = 0; at < text.size(); at += kStride) {
    flip_byte(manifest, at);
    const bool in_tool_version = at >= tool_at && at < tool_end;
    EXPECT_EQ(verify_bundle(dir_, {}).verified, in_tool_version) << "byte " << at;
    if (in_tool_version) {
      const VerificationResult pinned =
          verify_bundle(dir_, {.semantic = false, .manifest_sha256 = pin});
      EXPECT_TRUE(has(pinned, "hash_mismatch", "bundle.json")) << codes(pinned);
    }
    flip_byte(manifest, at);
  }
  EXPECT_TRUE(verify_bundle(dir_, {.semantic = false, .manifest_sha256 = pin}).verified);
}

TEST_F(BundleVerify, SymlinksAreNamedAndNeverFollowed) {
  // report.md replaced by a symlink to an identical copy outside: following it would verify.
  fs::copy_file(dir_ / "report.md", tmp_ / "outside.md");
  fs::remove(dir_ / "report.md");
  fs::create_symlink(tmp_ / "outside.md", dir_ / "report.md");
  fs::create_symlink("trace.jsonl", dir_ / "alias.jsonl");
  const VerificationResult r = verify_bundle(dir_, kSemantic);
  EXPECT_FALSE(r.verified);
  EXPECT_TRUE(has(r, "symlink", "report.md")) << codes(r);
  EXPECT_TRUE(has(r, "symlink", "alias.jsonl")) << codes(r);

  // The bundle directory itself as a symlink.
  fs::create_symlink(pristine(), tmp_ / "link");
  const VerificationResult l = verify_bundle(tmp_ / "link", {});
  EXPECT_TRUE(has(l, "symlink", "")) << codes(l);
  // A symlinked nsight/ directory.
  fs::remove_all(dir_);
  fs::copy(pristine(), dir_, fs::copy_options::recursive);
  fs::rename(dir_ / "nsight", tmp_ / "nsight");
  fs::create_directory_symlink(tmp_ / "nsight", dir_ / "nsight");
  const VerificationResult n = verify_bundle(dir_, {});
  EXPECT_TRUE(has(n, "symlink", "nsight")) << codes(n);
  EXPECT_TRUE(has(n, "missing", "nsight/stats.txt")) << codes(n);
}

TEST_F(BundleVerify, ExtraMissingAndSpecialFilesAreNamed) {
  write_file(dir_ / "notes.txt", "x");
  write_file(dir_ / "nsight" / "late.csv", "x");
  fs::create_directory(dir_ / "sub");
  ASSERT_EQ(::mkfifo((dir_ / "pipe").c_str(), 0644), 0);
  fs::remove(dir_ / "viewer.html");
  const VerificationResult r = verify_bundle(dir_, {});  // must not block on the FIFO
  EXPECT_TRUE(has(r, "extra_file", "notes.txt")) << codes(r);
  EXPECT_TRUE(has(r, "extra_file", "nsight/late.csv")) << codes(r);
  EXPECT_TRUE(has(r, "extra_directory", "sub")) << codes(r);
  EXPECT_TRUE(has(r, "not_regular", "pipe")) << codes(r);
  EXPECT_TRUE(has(r, "missing", "viewer.html")) << codes(r);
  EXPECT_EQ(r.findings.size(), 5u) << codes(r);
}

TEST_F(BundleVerify, BrokenManifestsGetAFinding) {
  const std::string text = read_file(dir_ / "bundle.json");
  struct Case {
    std::string text, code;
  };
  const std::vector<Case> cases = {
      {text.substr(0, text.size() / 2), "manifest_malformed"},  // truncated
      {"", "manifest_malformed"},
      {"not json at all", "manifest_malformed"},
      {"[1, 2]", "manifest_invalid"},
      {"{\"schema\": \"candle-graph/bundle/2\"}", "manifest_invalid"},
      {"{\"schema\": \"candle-graph/bundle/1\", \"files\": 3}", "manifest_invalid"},
      {text + " ", "manifest_invalid"},  // valid JSON, but not the canonical text
  };
  for (const auto& c : cases) {
    write_file(dir_ / "bundle.json", c.text);
    const VerificationResult r = verify_bundle(dir_, {});
    EXPECT_TRUE(has(r, c.code, "bundle.json")) << c.text.substr(0, 40) << "\n" << codes(r);
  }
  fs::remove(dir_ / "bundle.json");
  EXPECT_TRUE(has(verify_bundle(dir_, {}), "manifest_missing", "bundle.json"));
  // Through the CLI: exit 1 and the finding on stderr.
  write_file(dir_ / "bundle.json", text.substr(0, 100));
  const RunResult cli = run_cli({"verify", dir_.string()});
  EXPECT_EQ(cli.exit_code, 1);
  EXPECT_THAT(cli.err, HasSubstr("bundle.json: manifest_malformed"));
}

TEST_F(BundleVerify, HostilePathsAreRefusedWithoutReadingThem) {
  // A file outside the bundle whose size and hash are declared correctly: `..` must not reach it.
  write_file(tmp_ / "outside.jsonl", "secret");
  const std::string secret_sha =
      "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b";  // sha256sum of "secret"
  for (const std::string& path :
       {std::string("../outside.jsonl"), (tmp_ / "outside.jsonl").string(),
        std::string("nsight/../../outside.jsonl"), std::string("./trace.jsonl"),
        std::string("a//b")}) {
    fs::remove_all(dir_);
    fs::copy(pristine(), dir_, fs::copy_options::recursive);
    edit_manifest(dir_, [&](auto& j) {
      j["files"].push_back({{"path", path}, {"size", 6}, {"sha256", secret_sha}});
    });
    const VerificationResult r = verify_bundle(dir_, {});
    EXPECT_TRUE(has(r, "unsafe_path", path)) << path << "\n" << codes(r);
    EXPECT_EQ(r.bytes_hashed, 0u) << path;  // stopped before reading any file
  }
}

TEST_F(BundleVerify, DuplicateAndLyingEntriesAreFindings) {
  const std::string text = read_file(dir_ / "bundle.json");
  edit_manifest(dir_, [](auto& j) { j["files"].push_back(j["files"][0]); });
  EXPECT_TRUE(has(verify_bundle(dir_, {}), "duplicate_path", "baseline.jsonl"));

  write_file(dir_ / "bundle.json", text);
  edit_manifest(dir_, [](auto& j) {
    auto& f = entry(j, "nsight/broken_kern_sum.csv");
    f["size"] = f["size"].template get<int>() + 1;
  });
  VerificationResult r = verify_bundle(dir_, {});
  EXPECT_TRUE(has(r, "size_mismatch", "nsight/broken_kern_sum.csv")) << codes(r);

  write_file(dir_ / "bundle.json", text);
  edit_manifest(dir_, [](auto& j) { entry(j, "report.md")["size"] = std::uint64_t{1} << 50; });
  r = verify_bundle(dir_, {});
  EXPECT_TRUE(has(r, "size_limit", "report.md")) << codes(r);

  write_file(dir_ / "bundle.json", text);
  edit_manifest(dir_, [](auto& j) { entry(j, "viewer.html")["size"] = -1; });
  EXPECT_TRUE(has(verify_bundle(dir_, {}), "manifest_invalid", "bundle.json"));

  write_file(dir_ / "bundle.json", text);
  edit_manifest(dir_, [](auto& j) { j["run_id"] = "someone-else"; });
  EXPECT_TRUE(has(verify_bundle(dir_, {}), "run_id_mismatch", "bundle.json"));
}

// A file larger than any trace could be is refused from its size alone: a sparse file of
// 1 TiB + 1 byte would take hours to hash.
TEST_F(BundleVerify, HugeFilesAreRefusedUnread) {
  const std::uint64_t huge = (std::uint64_t{1} << 40) + 1;
  {
    const int fd = ::open((dir_ / "trace.jsonl").c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    const int rc = ::ftruncate(fd, static_cast<off_t>(huge));
    ::close(fd);
    if (rc != 0) GTEST_SKIP() << "this file system refuses a sparse 1 TiB file";
  }
  edit_manifest(dir_, [&](auto& j) { entry(j, "trace.jsonl")["size"] = huge; });
  VerificationResult r = verify_bundle(dir_, {});
  EXPECT_TRUE(has(r, "size_limit", "trace.jsonl")) << codes(r);
  // A manifest beyond 16 MiB is refused before it is parsed.
  const int fd = ::open((dir_ / "bundle.json").c_str(), O_WRONLY);
  ASSERT_EQ(::ftruncate(fd, off_t{17} << 20), 0);
  ::close(fd);
  r = verify_bundle(dir_, {});
  EXPECT_TRUE(has(r, "size_limit", "bundle.json")) << codes(r);
}

// Consistent tampering (content changed and manifest re-hashed) passes the byte check; only the
// semantic rebuild notices, naming the file that no longer matches.
TEST_F(BundleVerify, SemanticCheckCatchesConsistentTampering) {
  // Re-declares `file` with its present size and SHA-256 (the FIPS vectors test sha256_hex).
  auto rehash = [&](const std::string& file) {
    const std::string bytes = read_file(dir_ / file);
    edit_manifest(dir_, [&](auto& j) {
      entry(j, file)["sha256"] = candle_graph::bundle::sha256_hex(bytes);
      entry(j, file)["size"] = bytes.size();
    });
    ASSERT_TRUE(verify_bundle(dir_, {}).verified) << codes(verify_bundle(dir_, {}));
  };
  // 1. evidence.json edited: a measured total that was never measured.
  std::string evidence = read_file(dir_ / "evidence.json");
  const std::size_t at = evidence.find("\"findings\"");
  ASSERT_NE(at, std::string::npos);
  evidence.insert(at, "\"forged\": 1,\n  ");
  write_file(dir_ / "evidence.json", evidence);
  rehash("evidence.json");
  VerificationResult r = verify_bundle(dir_, kSemantic);
  EXPECT_TRUE(has(r, "semantic_mismatch", "evidence.json")) << codes(r);
  EXPECT_FALSE(has(r, "semantic_mismatch", "report.md")) << codes(r);

  // 2. The trace edited (a workload tag): evidence.json no longer follows from it.
  fs::remove_all(dir_);
  fs::copy(pristine(), dir_, fs::copy_options::recursive);
  std::string trace = read_file(dir_ / "trace.jsonl");
  const std::size_t tag = trace.find("\"seed\":\"1\"");
  ASSERT_NE(tag, std::string::npos);
  trace.replace(tag, 10, "\"seed\":\"2\"");
  write_file(dir_ / "trace.jsonl", trace);
  rehash("trace.jsonl");
  r = verify_bundle(dir_, kSemantic);
  EXPECT_TRUE(has(r, "semantic_mismatch", "evidence.json")) << codes(r);
  const RunResult cli = run_cli({"verify", dir_.string(), "--semantic"});
  EXPECT_EQ(cli.exit_code, 1);
  EXPECT_THAT(cli.err, HasSubstr("evidence.json: semantic_mismatch"));

  // 3. An Nsight file edited: the GPU evidence differs.
  fs::remove_all(dir_);
  fs::copy(pristine(), dir_, fs::copy_options::recursive);
  write_file(dir_ / "nsight" / "stats.txt", "");
  rehash("nsight/stats.txt");
  r = verify_bundle(dir_, kSemantic);
  EXPECT_TRUE(has(r, "semantic_mismatch", "evidence.json")) << codes(r);
}

// Without an Nsight directory the rebuild runs beside the hashing. Its findings count only when
// every file matched the manifest, so a bundle damaged in the hashed sense gets the findings of
// the plain verify (computed here by verify_bundle without --semantic) and nothing more, and a
// planted FIFO in the trace's place is never waited on.
TEST_F(BundleVerify, WithoutNsightTheRebuildBesideTheHashesKeepsItsFindingsApart) {
  cgcli::TempDir root("cg-bundle-plain");
  const Inputs in = make_inputs(root.path());
  const fs::path plain = root / "plain";
  const RunResult made = publish(in, plain, /*with_baseline=*/true, /*with_nsight=*/false);
  ASSERT_EQ(made.exit_code, 0) << cgcli::describe(made);
  const VerificationResult ok = verify_bundle(plain, kSemantic);
  EXPECT_TRUE(ok.verified) << codes(ok);

  // 1. evidence.json changed and not re-declared: its size mismatch alone.
  const fs::path changed = root / "changed";
  fs::copy(plain, changed, fs::copy_options::recursive);
  std::string evidence = read_file(changed / "evidence.json");
  evidence.insert(evidence.find("\"findings\""), "\"forged\": 1,\n  ");
  write_file(changed / "evidence.json", evidence);
  const VerificationResult hashed = verify_bundle(changed, {});
  VerificationResult r = verify_bundle(changed, kSemantic);
  EXPECT_TRUE(has(r, "size_mismatch", "evidence.json")) << codes(r);
  EXPECT_EQ(codes(r), codes(hashed));

  // 2. A FIFO where the trace was: named as not regular, and verify returns.
  const fs::path fifo = root / "fifo";
  fs::copy(plain, fifo, fs::copy_options::recursive);
  fs::remove(fifo / "trace.jsonl");
  ASSERT_EQ(::mkfifo((fifo / "trace.jsonl").c_str(), 0644), 0);
  r = verify_bundle(fifo, kSemantic);
  EXPECT_TRUE(has(r, "not_regular", "trace.jsonl")) << codes(r);
  EXPECT_EQ(codes(r), codes(verify_bundle(fifo, {})));

  // 3. Consistent tampering (the edit re-declared): the rebuild's mismatch.
  edit_manifest(changed, [&](auto& j) {
    entry(j, "evidence.json")["sha256"] = candle_graph::bundle::sha256_hex(evidence);
    entry(j, "evidence.json")["size"] = evidence.size();
  });
  ASSERT_TRUE(verify_bundle(changed, {}).verified);
  r = verify_bundle(changed, kSemantic);
  EXPECT_TRUE(has(r, "semantic_mismatch", "evidence.json")) << codes(r);
  EXPECT_FALSE(r.verified);
}

}  // namespace
