// render_evidence_html (trace6.md §12.2 and its Content-Security-Policy, which
// forbids every connection) with hand-made assets, plus the
// bundled front end when this binary has it.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <array>
#include <nlohmann/json.hpp>

#include "candle_graph/error.hpp"
#include "viewer/html_document.hpp"
#include "viewer_test_helpers.hpp"

using candle_graph::Error;
using candle_graph::viewer::render_evidence_html;
using candle_graph::viewer::ViewerAssets;
using namespace cg_viewer_test;

namespace {

// Precomputed outside the code under test:
//   printf %s "document.title='cg';" | openssl dgst -sha256 -binary | base64
//   printf %s "body{color:red}" | openssl dgst -sha256 -binary | base64
constexpr std::string_view kScriptHash = "ntUlupbYlT7W2p9Nzop6AWhBwqmD9h6akv116zf30Jw=";
constexpr std::string_view kStyleHash = "FcQqt3aNlV7AZnGV4zkQRVeCeJOxbMPnQSx258L803E=";

std::string csp_of(std::string_view page) {
  return std::string(between(page, "Content-Security-Policy\" content=\"", "\""));
}

// SHA-256 through OpenSSL, base64 by hand (RFC 4648 alphabet with padding), for the bundled
// front end whose hash cannot be precomputed.
std::string sha256_base64(std::string_view text) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> d{};
  unsigned int n = 0;
  EXPECT_EQ(EVP_Digest(text.data(), text.size(), d.data(), &n, EVP_sha256(), nullptr), 1);
  EXPECT_EQ(n, 32u);
  static constexpr char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (unsigned i = 0; i < n; i += 3) {
    const unsigned rest = n - i;
    const unsigned v = (d[i] << 16) | (rest > 1 ? d[i + 1] << 8 : 0) | (rest > 2 ? d[i + 2] : 0);
    out += abc[(v >> 18) & 63];
    out += abc[(v >> 12) & 63];
    out += rest > 1 ? abc[(v >> 6) & 63] : '=';
    out += rest > 2 ? abc[v & 63] : '=';
  }
  return out;
}

std::string error_of(std::string_view payload, const ViewerAssets& assets) {
  try {
    render_evidence_html(payload, assets);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(RenderEvidenceHtml, OwnBase64MatchesTheOpenSslCommandLine) {
  // Guards the helper used for the bundled assets below.
  EXPECT_EQ(sha256_base64(kScript), kScriptHash);
  EXPECT_EQ(sha256_base64(kStyle), kStyleHash);
}

TEST(RenderEvidenceHtml, CspAllowsExactlyTheInlineScriptAndStyleByHash) {
  const std::string page = render_evidence_html("{}", hand_made_assets());
  const std::string csp = csp_of(page);
  EXPECT_NE(csp.find("script-src 'sha256-" + std::string(kScriptHash) + "'"), std::string::npos)
      << csp;
  EXPECT_NE(csp.find("style-src 'sha256-" + std::string(kStyleHash) + "'"), std::string::npos)
      << csp;
  // Nothing else may run or connect: one hash per directive, no 'unsafe-inline', no hosts.
  EXPECT_EQ(count(csp, "sha256-"), 2u);
  EXPECT_EQ(count(csp, "unsafe"), 0u);
  EXPECT_NE(csp.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(csp.find("connect-src 'none'"), std::string::npos);
  // The text between the tags is exactly what was hashed.
  EXPECT_EQ(between(page, "<script>", "</script>"), kScript);
  EXPECT_EQ(between(page, "<style>", "</style>"), kStyle);
}

TEST(RenderEvidenceHtml, HostilePayloadStaysInert) {
  const std::string payload =
      R"({"a":"</script><!--","b":"@CG_SCRIPT@ @CG_PAYLOAD@ @CG_CSP@ @CG_STYLE@",)"
      R"("c":"<script>x</ScRiPt>"})";
  const std::string page = render_evidence_html(payload, hand_made_assets());

  // Exactly the shell's two script elements, each closed once; no comment opened.
  EXPECT_EQ(count_ci(page, "<script"), 2u) << page;
  EXPECT_EQ(count_ci(page, "</script"), 2u) << page;
  EXPECT_EQ(count(page, "<!--"), 0u);
  // The payload's placeholders appear once (their own text), never substituted; the assets and
  // the CSP were inserted exactly once.
  for (std::string_view p : {"@CG_SCRIPT@", "@CG_PAYLOAD@", "@CG_CSP@", "@CG_STYLE@"})
    EXPECT_EQ(count(page, p), 1u) << p;
  EXPECT_EQ(count(page, kScript), 1u);
  EXPECT_EQ(count(page, kStyle), 1u);
  EXPECT_EQ(count(page, "default-src"), 1u);

  // The element holds the payload escaped once (written by hand from trace6.md §12.2) and parses
  // back to the same value.
  const std::string_view inside = between(page, "type=\"application/json\">", "</script>");
  EXPECT_EQ(
      inside,
      R"({"a":"\u003c/script\u003e\u003c!--","b":"@CG_SCRIPT@ @CG_PAYLOAD@ @CG_CSP@ @CG_STYLE@",)"
      R"("c":"\u003cscript\u003ex\u003c/ScRiPt\u003e"})");
  EXPECT_EQ(nlohmann::json::parse(inside), nlohmann::json::parse(payload));
}

TEST(RenderEvidenceHtml, PlaceholderTextInsideAssetsIsNotSubstituted) {
  ViewerAssets assets = hand_made_assets();
  const std::string style = "body{}/*@CG_SCRIPT@ @CG_PAYLOAD@*/";
  const std::string script = "var s='@CG_STYLE@ @CG_CSP@';";
  assets.style = style;
  assets.script = script;
  const std::string page = render_evidence_html(R"({"k":1})", assets);
  EXPECT_EQ(count(page, R"({"k":1})"), 1u);
  EXPECT_EQ(count(page, script), 1u);
  EXPECT_EQ(count(page, style), 1u);
  EXPECT_EQ(count(page, "default-src"), 1u);
}

TEST(RenderEvidenceHtml, ScriptThatWouldCloseItsElementIsRefused) {
  for (std::string_view bad : {"a='</script>';", "a='</SCRIPT>';", "a='</ScRiPt ';", "</script"}) {
    ViewerAssets assets = hand_made_assets();
    assets.script = bad;
    EXPECT_THROW(render_evidence_html("{}", assets), Error) << bad;
  }
  ViewerAssets assets = hand_made_assets();
  assets.style = "a::after{content:'</STYLE>'}";
  EXPECT_THROW(render_evidence_html("{}", assets), Error);
  // A near miss is fine: `<\/script` is how bundlers write it inside strings.
  assets = hand_made_assets();
  assets.script = "a='<\\/script>';";
  EXPECT_NO_THROW(render_evidence_html("{}", assets));
}

TEST(RenderEvidenceHtml, AssetsReferringToTheNetworkAreRefused) {
  ViewerAssets assets = hand_made_assets();
  assets.script = "fetch('https://example.com/x');";
  const std::string err = error_of("{}", assets);
  EXPECT_NE(err.find("cannot be inlined safely"), std::string::npos) << err;
  assets = hand_made_assets();
  assets.style = "@import url(https://example.com/a.css);";
  EXPECT_THROW(render_evidence_html("{}", assets), Error);
  assets = hand_made_assets();
  assets.script = "fetch('HTTPS://example.com/x');";  // schemes are case-insensitive
  EXPECT_THROW(render_evidence_html("{}", assets), Error);
  assets = hand_made_assets();
  assets.style = "@import url(Https://example.com/a.css);";
  EXPECT_THROW(render_evidence_html("{}", assets), Error);
}

TEST(RenderEvidenceHtml, UnavailableAssetsGiveAnErrorNamingWhy) {
  const ViewerAssets missing{false, {}, {}, {}, "node was not found when candle-graph was built"};
  const std::string err = error_of("{}", missing);
  EXPECT_NE(err.find("front end is not built"), std::string::npos) << err;
  EXPECT_NE(err.find("node was not found when candle-graph was built"), std::string::npos) << err;
}

TEST(RenderEvidenceHtml, ShellLackingAPlaceholderIsRefused) {
  for (std::string_view marker : {"@CG_CSP@", "@CG_STYLE@", "@CG_PAYLOAD@", "@CG_SCRIPT@"}) {
    std::string shell(kShell);
    shell.erase(shell.find(marker), marker.size());
    ViewerAssets assets = hand_made_assets();
    assets.shell = shell;
    EXPECT_THROW(render_evidence_html("{}", assets), Error) << marker;
  }
  // A missing script is not hidden by another placeholder written twice.
  std::string shell(kShell);
  shell.replace(shell.find("@CG_SCRIPT@"), 11, "@CG_PAYLOAD@");
  ViewerAssets assets = hand_made_assets();
  assets.shell = shell;
  EXPECT_THROW(render_evidence_html("{}", assets), Error);
}

TEST(RenderEvidenceHtml, HandMadePageIsOffline) {
  const std::string page =
      render_evidence_html(R"({"schema":"candle-graph/viewer/4"})", hand_made_assets());
  EXPECT_EQ(count_ci(page, "http://"), 0u);
  EXPECT_EQ(count_ci(page, "https://"), 0u);
  EXPECT_EQ(count_ci(page, " src="), 0u);
  EXPECT_EQ(count_ci(page, " href="), 0u);
}

TEST(RenderEvidenceHtml, BundledFrontEndHashesMatchWhatIsInlined) {
  const ViewerAssets& bundled = candle_graph::viewer::bundled_assets();
  if (!bundled.available) {
    // Then `view` must say why (the reason names node or node_modules).
    EXPECT_FALSE(bundled.missing_reason.empty());
    EXPECT_THROW(render_evidence_html("{}"), Error);
    GTEST_SKIP() << "front end not bundled: " << bundled.missing_reason;
  }
  const std::string payload = R"({"x":"</script>"})";
  const std::string page = render_evidence_html(payload);
  EXPECT_TRUE(page.starts_with("<!DOCTYPE html>"));
  const std::string csp = csp_of(page);
  // What a browser hashes is the element text: the last <script> (code) and the <style>.
  const std::size_t code = page.rfind("<script>");
  ASSERT_NE(code, std::string::npos);
  const std::string_view script = between(page, "<script>", "</script>", code);
  const std::string_view style = between(page, "<style>", "</style>");
  EXPECT_EQ(script, bundled.script);
  EXPECT_NE(csp.find("script-src 'sha256-" + sha256_base64(script) + "'"), std::string::npos);
  EXPECT_NE(csp.find("style-src 'sha256-" + sha256_base64(style) + "'"), std::string::npos);
  EXPECT_EQ(count_ci(page, "<script"), 2u);
  EXPECT_EQ(count(page, "https://"), 0u);
  // The only http:// text is the SVG/XML namespace name the bundle passes to createElementNS,
  // an identifier that is never fetched.
  for (std::size_t p = page.find("http://"); p != std::string::npos;
       p = page.find("http://", p + 1))
    EXPECT_EQ(page.compare(p, 18, "http://www.w3.org/"), 0) << page.substr(p, 60);
  EXPECT_EQ(nlohmann::json::parse(between(page, "type=\"application/json\">", "</script>")),
            nlohmann::json::parse(payload));
}
