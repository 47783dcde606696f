#include "advplan/io/atomic_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

#include "advplan/core/error.hpp"

namespace advplan::io {

namespace {
constexpr std::size_t kBufSize = 1 << 16;
}

FdStreambuf::FdStreambuf(int fd) : fd_(fd), buf_(new char[kBufSize]) { setp(buf_.get(), buf_.get() + kBufSize); }

FdStreambuf::~FdStreambuf() { flush_buffer(); }

bool FdStreambuf::flush_buffer() {
  const char* p = pbase();
  std::size_t n = static_cast<std::size_t>(pptr() - pbase());
  while (n > 0 && !failed_) {
    const ssize_t w = ::write(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      failed_ = true;
      break;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  setp(buf_.get(), buf_.get() + kBufSize);
  return !failed_;
}

FdStreambuf::int_type FdStreambuf::overflow(int_type ch) {
  if (!flush_buffer()) return traits_type::eof();
  if (!traits_type::eq_int_type(ch, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(ch);
    pbump(1);
  }
  return traits_type::not_eof(ch);
}

int FdStreambuf::sync() { return flush_buffer() ? 0 : -1; }

std::streamsize FdStreambuf::xsputn(const char* s, std::streamsize n) {
  std::streamsize done = 0;
  while (done < n) {
    const std::streamsize room = epptr() - pptr();
    if (room == 0) {
      if (!flush_buffer()) return done;
      continue;
    }
    const std::streamsize k = std::min(room, n - done);
    std::memcpy(pptr(), s + done, static_cast<std::size_t>(k));
    pbump(static_cast<int>(k));
    done += k;
  }
  return done;
}

namespace {
/// How a path that exists is written: a regular file is replaced atomically; a FIFO or character device (/dev/null,
/// /dev/stdout, a terminal) is written through, whether named directly or by a symbolic link; anything else (a
/// directory, a socket, a block device, a symbolic link to a file) is refused, so a rename never replaces what is
/// not a regular file.
enum class Target { absent_or_regular, write_through };
Target classify(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return Target::absent_or_regular;  // missing: created by the rename
  if (S_ISREG(st.st_mode)) return Target::absent_or_regular;
  const bool link = S_ISLNK(st.st_mode);
  if (link && ::stat(path.c_str(), &st) != 0)
    throw IoError(fmt::format("{}: is a symbolic link to nothing ({}); advplan does not replace a symbolic link", path,
                              std::strerror(errno)));
  if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) return Target::write_through;
  if (link)
    throw IoError(fmt::format("{}: is a symbolic link; advplan does not replace one (name the file it points to)", path));
  throw IoError(fmt::format("{}: is not a regular file (a directory, socket or block device), so advplan does not "
                            "write it", path));
}
}  // namespace

AtomicWriter::AtomicWriter(std::string path) : path_(std::move(path)), out_(nullptr) {
  if (classify(path_) == Target::write_through) {
    // O_NONBLOCK on open: a FIFO nobody reads is an error now, not a hang; then writes block as usual.
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd_ < 0) {
      const int err = errno;
      throw IoError(err == ENXIO ? fmt::format("{}: a FIFO that nobody reads", path_)
                                 : fmt::format("{}: cannot write ({})", path_, std::strerror(err)));
    }
    const int flags = ::fcntl(fd_, F_GETFL);
    if (flags < 0 || ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK) != 0) {
      const int err = errno;
      ::close(fd_);
      throw IoError(fmt::format("{}: cannot write ({})", path_, std::strerror(err)));
    }
    buf_ = std::make_unique<FdStreambuf>(fd_);
    out_.rdbuf(buf_.get());
    return;
  }
  const std::filesystem::path target(path_);
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  std::string base = ".";
  base += target.filename().string();
  base += ".tmp-XXXXXX";
  const std::string tmpl = (dir / base).string();
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  fd_ = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd_ < 0) throw IoError(fmt::format("{}: cannot write file ({})", path_, std::strerror(errno)));
  tmp_ = name.data();
  buf_ = std::make_unique<FdStreambuf>(fd_);
  out_.rdbuf(buf_.get());
}

AtomicWriter::~AtomicWriter() {
  if (!committed_) {
    out_.rdbuf(nullptr);
    buf_.reset();
    if (fd_ >= 0) ::close(fd_);
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
  }
}

void AtomicWriter::commit() {
  out_.flush();
  const bool ok = static_cast<bool>(out_) && !buf_->failed() && buf_->pubsync() == 0;
  out_.rdbuf(nullptr);
  buf_.reset();
  if (tmp_.empty()) {  // written through (a FIFO or character device): nothing to rename
    const bool close_ok = ::close(fd_) == 0;
    fd_ = -1;
    committed_ = true;
    if (!ok || !close_ok) throw IoError(fmt::format("{}: write failed", path_));
    return;
  }
  // mkstemp creates the file 0600; give it the mode an ordinary file would get (0666 less the umask).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  const bool chmod_ok = ::fchmod(fd_, 0666 & ~mask) == 0;
  const bool close_ok = ::close(fd_) == 0;
  fd_ = -1;
  if (!ok || !chmod_ok || !close_ok) {
    ::unlink(tmp_.c_str());
    committed_ = true;
    throw IoError(fmt::format("{}: write failed", path_));
  }
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp_.c_str());
    committed_ = true;
    throw IoError(fmt::format("{}: cannot rename temporary file into place ({})", path_, std::strerror(err)));
  }
  committed_ = true;
}

void write_file_atomic(const std::string& path, const std::string& content) {
  AtomicWriter w(path);
  w.stream() << content;
  w.commit();
}



int open_readable(const std::string& path) {
  // Opened without blocking, so a FIFO with no writer cannot hang the open, and refused when it is a FIFO or a
  // socket, whose reads could wait forever; a device (/dev/zero) is read, up to the caller's limit.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw IoError(fmt::format("{}: cannot read file", path));
  struct stat st{};
  if (::fstat(fd, &st) != 0 || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISDIR(st.st_mode)) {
    const bool dir = S_ISDIR(st.st_mode);
    ::close(fd);
    throw IoError(fmt::format("{}: cannot read file ({})", path,
                              dir ? "a directory" : "a FIFO or socket, not a file"));
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

std::string read_text_file(const std::string& path, std::size_t max_bytes) {
  const int fd = open_readable(path);
  // Read in blocks up to one byte past the limit: a device (/dev/zero) has no size to look at first.
  std::string out;
  std::array<char, 1 << 16> block{};
  while (out.size() <= max_bytes) {
    const ssize_t n = ::read(fd, block.data(), std::min<std::size_t>(block.size(), max_bytes + 1 - out.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw IoError(fmt::format("{}: cannot read file ({})", path, std::strerror(err)));
    }
    if (n == 0) break;
    out.append(block.data(), static_cast<std::size_t>(n));
  }
  ::close(fd);
  if (out.size() > max_bytes)
    throw IoError(fmt::format("{}: larger than the limit of {} bytes for this kind of file", path, max_bytes));
  return out;
}

std::string read_text_file(const std::string& path) {
  return read_text_file(path, std::numeric_limits<std::size_t>::max() - 1);
}

void write_files(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw IoError(fmt::format("{}: cannot create directory ({})", dir, ec.message()));
  for (const auto& [name, content] : files) {
    const std::filesystem::path target = std::filesystem::path(dir) / name;
    // Each folder between dir and the file: created when missing, refused when a symbolic link stands there.
    std::filesystem::path at(dir);
    const std::filesystem::path rel = std::filesystem::path(name).parent_path();
    for (const auto& part : rel) {
      at /= part;
      if (std::filesystem::is_symlink(std::filesystem::symlink_status(at, ec)))
        throw IoError(fmt::format("{}: is a symbolic link; advplan writes into real folders only, never through a link",
                                  at.string()));
      std::filesystem::create_directory(at, ec);
      if (ec) throw IoError(fmt::format("{}: cannot create directory ({})", at.string(), ec.message()));
    }
    // A file of a folder advplan writes is replaced only when it is a regular file: never written through a
    // link, a FIFO or a device that a hostile folder planted there.
    const auto st = std::filesystem::symlink_status(target, ec);
    if (std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
      throw IoError(fmt::format("{}: exists and is not a regular file (a link, FIFO or device); advplan replaces only "
                                "regular files in a folder it writes",
                                target.string()));
    write_file_atomic(target.string(), content);
  }
}

}  // namespace advplan::io
