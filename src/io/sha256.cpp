#include "advplan/io/sha256.hpp"

#include <openssl/evp.h>

#include <stdexcept>

namespace advplan::io {

std::string sha256_hex(std::string_view bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("sha256: OpenSSL digest failed");
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += hex[md[i] >> 4];
    out += hex[md[i] & 0xf];
  }
  return out;
}

}  // namespace advplan::io
