#pragma once
#include <string>
#include <string_view>

namespace advplan::io {
/// Lower-case hex SHA-256 of `bytes` (OpenSSL).
std::string sha256_hex(std::string_view bytes);
}  // namespace advplan::io
