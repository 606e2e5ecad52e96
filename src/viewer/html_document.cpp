#include "viewer/html_document.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "candle_graph/error.hpp"

namespace candle_graph::viewer {
namespace {

std::string sha256_base64(std::string_view text) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  if (EVP_Digest(text.data(), text.size(), digest.data(), &size, EVP_sha256(), nullptr) != 1)
    throw Error("", 0, "viewer: SHA-256 of the inline script failed");
  std::string out(4 * ((size + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), digest.data(),
                                static_cast<int>(size));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

bool contains_ci(std::string_view haystack, std::string_view needle) {
  auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                        [](char a, char b) {
                          return std::tolower(static_cast<unsigned char>(a)) ==
                                 std::tolower(static_cast<unsigned char>(b));
                        });
  return it != haystack.end();
}

}  // namespace

std::string escape_for_script(std::string_view json) {
  std::string out;
  out.reserve(json.size() + json.size() / 16);
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '\xE2' && i + 2 < json.size() && json[i + 1] == '\x80' &&
               (json[i + 2] == '\xA8' || json[i + 2] == '\xA9')) {
      // U+2028 / U+2029 are UTF-8 E2 80 A8 / E2 80 A9: line terminators in old JS parsers.
      out += json[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

std::string render_evidence_html(std::string_view payload_json, const ViewerAssets& assets) {
  if (!assets.available)
    throw Error("", 0,
                "the HTML viewer front end is not built into this binary: " +
                    std::string(assets.missing_reason));
  // The bundle is inlined: a closing tag inside it would end the element early (trace6.md §12.2). A
  // network address would break the offline promise (URL schemes are case-insensitive).
  if (contains_ci(assets.script, "</script") || contains_ci(assets.style, "</style") ||
      contains_ci(assets.script, "https://") || contains_ci(assets.style, "https://"))
    throw Error("", 0, "viewer: the bundled front end cannot be inlined safely");

  const std::string csp = "default-src 'none'; script-src 'sha256-" + sha256_base64(assets.script) +
                          "'; style-src 'sha256-" + sha256_base64(assets.style) +
                          "'; img-src data: blob:; connect-src 'none'; font-src 'none'; "
                          "media-src 'none'; object-src 'none'; worker-src 'none'; "
                          "frame-src 'none'; form-action 'none'; base-uri 'none'";
  const std::string payload = escape_for_script(payload_json);

  // Single pass over the shell: text inserted for one placeholder is never scanned again, so a
  // payload containing "@CG_SCRIPT@" stays inert.
  struct Slot {
    std::string_view marker;
    std::string_view text;
  };
  const std::array<Slot, 4> slots = {Slot{"@CG_CSP@", csp}, Slot{"@CG_STYLE@", assets.style},
                                     Slot{"@CG_PAYLOAD@", payload},
                                     Slot{"@CG_SCRIPT@", assets.script}};
  std::string html;
  html.reserve(assets.shell.size() + csp.size() + assets.style.size() + payload.size() +
               assets.script.size());
  std::string_view rest = assets.shell;
  unsigned filled = 0;  // one bit per slot: a placeholder written twice must not hide a missing one
  while (!rest.empty()) {
    std::size_t at = std::string_view::npos;
    const Slot* slot = nullptr;
    for (const Slot& s : slots) {
      const std::size_t p = rest.find(s.marker);
      if (p < at) {
        at = p;
        slot = &s;
      }
    }
    if (!slot) {
      html += rest;
      break;
    }
    html += rest.substr(0, at);
    html += slot->text;
    rest.remove_prefix(at + slot->marker.size());
    filled |= 1u << (slot - slots.data());
  }
  if (filled != (1u << slots.size()) - 1)
    throw Error("", 0, "viewer: the bundled HTML shell lacks a placeholder");
  return html;
}

std::string render_evidence_html(std::string_view payload_json) {
  return render_evidence_html(payload_json, bundled_assets());
}

}  // namespace candle_graph::viewer
