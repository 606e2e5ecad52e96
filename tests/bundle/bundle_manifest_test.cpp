// The bundle's building blocks on their own: SHA-256 against the FIPS 180-2 test vectors, the
// manifest path rules, and the manifest round trip.
#include <gmock/gmock.h>

#include <fstream>
#include <sstream>

#include "bundle/bundle_manifest.hpp"
#include "bundle/sha256.hpp"

namespace {

using namespace candle_graph::bundle;

TEST(Sha256, MatchesTheStandardVectors) {
  // FIPS 180-2 appendix B.1 and B.2, and the empty message.
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  Sha256 h;  // incremental updates give the same digest
  h.update("ab");
  h.update("c");
  EXPECT_EQ(h.hex_digest(), sha256_hex("abc"));
  EXPECT_TRUE(is_sha256_hex(sha256_hex("x")));
  EXPECT_FALSE(is_sha256_hex(std::string(64, 'A')));
  EXPECT_FALSE(is_sha256_hex(std::string(63, 'a')));
}

TEST(ManifestPaths, OnlyFlatRelativePathsAreSafe) {
  for (const char* ok : {"trace.jsonl", "nsight/a.csv", "nsight/..hidden", "a b"})
    EXPECT_FALSE(path_problem(ok)) << ok;
  for (const char* bad : {"", "/etc/passwd", "..", "../x", "a/../b", "./x", "a/./b", "a//b", "a/",
                          "a\\b", "a/b/c", "bundle.json", "x\ny"})
    EXPECT_TRUE(path_problem(bad)) << bad;
}

TEST(Manifest, RoundTripsAndRejectsDuplicates) {
  BundleManifest m;
  m.run_id = "r";
  m.tool_version = "1";
  m.schemas = expected_schemas();
  m.files = {{"a.txt", 3, sha256_hex("abc")}};
  std::vector<Finding> findings;
  const auto back = parse_manifest(manifest_to_json(m), findings);
  ASSERT_TRUE(back) << (findings.empty() ? "" : findings[0].message);
  EXPECT_EQ(back->run_id, "r");
  ASSERT_EQ(back->files.size(), 1u);
  EXPECT_EQ(back->files[0].sha256, sha256_hex("abc"));
  m.files.push_back(m.files[0]);
  EXPECT_FALSE(parse_manifest(manifest_to_json(m), findings));
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings.back().code, "duplicate_path");
}

// Found by fuzz_bundle_manifest: a number beyond a double made nlohmann throw out_of_range (not
// a parse_error), which escaped parse_manifest instead of becoming a finding. The fixture is the
// fuzzer's input as it found it.
TEST(Manifest, NumberOutOfRangeIsAFindingNotAnException) {
  std::ifstream in(std::string(CG_FIXTURE_DIR) + "/bundle/fuzz-number-overflow.json",
                   std::ios::binary);
  ASSERT_TRUE(in) << "missing fixture";
  std::stringstream text;
  text << in.rdbuf();
  ASSERT_NE(text.str().find("215e777777"), std::string::npos);
  for (const std::string& manifest : {text.str(), std::string(R"({"schema": 1e999})")}) {
    std::vector<Finding> findings;
    std::optional<BundleManifest> parsed;
    EXPECT_NO_THROW(parsed = parse_manifest(manifest, findings)) << manifest;
    EXPECT_FALSE(parsed);
    ASSERT_EQ(findings.size(), 1u) << manifest;
    EXPECT_EQ(findings[0].code, "manifest_malformed");
    EXPECT_EQ(findings[0].path, "bundle.json");
  }
}

}  // namespace
