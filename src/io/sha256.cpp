#include "advplan/io/sha256.hpp"

#include <openssl/evp.h>

#include <stdexcept>

namespace advplan::io {

namespace {
std::string to_hex(const unsigned char* md, unsigned int len) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(2 * len);
  for (unsigned int i = 0; i < len; ++i) {
    out += hex[md[i] >> 4];
    out += hex[md[i] & 0xf];
  }
  return out;
}
}  // namespace

std::string sha256_hex(std::string_view bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("sha256: OpenSSL digest failed");
  return to_hex(md, len);
}

struct Sha256::Ctx {
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  ~Ctx() { EVP_MD_CTX_free(md); }
};

Sha256::Sha256() : ctx_(std::make_unique<Ctx>()) {
  if (!ctx_->md || EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("sha256: OpenSSL digest failed");
}
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(std::string_view bytes) {
  if (EVP_DigestUpdate(ctx_->md, bytes.data(), bytes.size()) != 1) throw std::runtime_error("sha256: OpenSSL digest failed");
}

std::string Sha256::hex() const {
  Ctx copy;
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!copy.md || EVP_MD_CTX_copy_ex(copy.md, ctx_->md) != 1 || EVP_DigestFinal_ex(copy.md, md, &len) != 1)
    throw std::runtime_error("sha256: OpenSSL digest failed");
  return to_hex(md, len);
}

}  // namespace advplan::io
