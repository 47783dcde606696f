#pragma once
#include <memory>
#include <string>
#include <string_view>

namespace advplan::io {
/// Lower-case hex SHA-256 of `bytes` (OpenSSL).
std::string sha256_hex(std::string_view bytes);

/// A running SHA-256 (OpenSSL EVP): feed bytes with update(); hex() is the digest of everything fed so far and
/// leaves the state as it was, so a growing file can be digested at every checkpoint in one pass.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::string_view bytes);
  std::string hex() const;

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};
}  // namespace advplan::io
