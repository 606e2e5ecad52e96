// SHA-256 through OpenSSL's EVP API (the bundle manifest's content addresses). Incremental, so a
// file is hashed while it is copied or read, never held whole in memory.
#pragma once

#include <string>
#include <string_view>

namespace candle_graph::bundle {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(std::string_view bytes);
  // Lowercase hex of the digest (64 characters). The hasher cannot be updated afterwards.
  std::string hex_digest();

 private:
  void* ctx_;  // EVP_MD_CTX, kept out of this header so users need no OpenSSL include path
};

std::string sha256_hex(std::string_view bytes);

// 64 lowercase hex digits: the only digest form a manifest may declare.
bool is_sha256_hex(std::string_view text) noexcept;

}  // namespace candle_graph::bundle
