#include "advplan/io/atomic_file.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "advplan/core/error.hpp"

namespace advplan::io {

AtomicWriter::AtomicWriter(std::string path) : path_(std::move(path)) {
  tmp_ = fmt::format("{}.tmp-{}", path_, ::getpid());
  out_.open(tmp_, std::ios::binary | std::ios::trunc);
  if (!out_) throw IoError(fmt::format("{}: cannot write file ({})", path_, std::strerror(errno)));
}

AtomicWriter::~AtomicWriter() {
  if (!committed_) {
    out_.close();
    std::error_code ec;
    std::filesystem::remove(tmp_, ec);
  }
}

void AtomicWriter::commit() {
  out_.flush();
  const bool ok = static_cast<bool>(out_);
  out_.close();
  if (!ok) throw IoError(fmt::format("{}: write failed", path_));
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0)
    throw IoError(fmt::format("{}: cannot rename temporary file into place ({})", path_, std::strerror(errno)));
  committed_ = true;
}

void write_file_atomic(const std::string& path, const std::string& content) {
  AtomicWriter w(path);
  w.stream() << content;
  w.commit();
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(fmt::format("{}: cannot read file", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace advplan::io
