#include "bundle/sha256.hpp"

#include <openssl/evp.h>

#include <stdexcept>

#include "candle_graph/error.hpp"

namespace candle_graph::bundle {

namespace {
EVP_MD_CTX* as_ctx(void* p) {
  return static_cast<EVP_MD_CTX*>(p);
}
}  // namespace

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (ctx_ == nullptr || EVP_DigestInit_ex(as_ctx(ctx_), EVP_sha256(), nullptr) != 1) {
    EVP_MD_CTX_free(as_ctx(ctx_));
    throw Error("cannot initialise SHA-256 (OpenSSL EVP)");
  }
}

Sha256::~Sha256() {
  EVP_MD_CTX_free(as_ctx(ctx_));
}

void Sha256::update(std::string_view bytes) {
  if (bytes.empty()) return;
  if (EVP_DigestUpdate(as_ctx(ctx_), bytes.data(), bytes.size()) != 1)
    throw Error("SHA-256 update failed (OpenSSL EVP)");
}

std::string Sha256::hex_digest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_DigestFinal_ex(as_ctx(ctx_), digest, &size) != 1)
    throw Error("SHA-256 finalisation failed (OpenSSL EVP)");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * size);
  for (unsigned int i = 0; i < size; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0xF]);
  }
  return out;
}

std::string sha256_hex(std::string_view bytes) {
  Sha256 h;
  h.update(bytes);
  return h.hex_digest();
}

bool is_sha256_hex(std::string_view text) noexcept {
  if (text.size() != 64) return false;
  for (char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace candle_graph::bundle
