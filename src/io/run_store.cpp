#include "advplan/io/run_store.hpp"

#include <tbb/parallel_for.h>

#include <exception>

#include <fcntl.h>
#include <sys/file.h>
#include <fmt/format.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "advplan/core/error.hpp"
#include "advplan/io/atomic_dir.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/core/untrusted.hpp"

namespace advplan::io {
namespace fs = std::filesystem;

namespace {
constexpr const char* kWorkDir = ".advplan-work";

bool is_empty_dir(const fs::path& d) {
  std::error_code ec;
  const fs::directory_iterator it(d, ec);
  if (ec) throw IoError(fmt::format("{}: cannot list the directory ({})", d.string(), ec.message()));
  return it == fs::directory_iterator();
}

/// Every entry below `dir` (symbolic links not followed) in iteration order: `visit(entry, relative path, type)`,
/// the type following links through path_type; `visit` returns false to skip a directory's contents. IoError
/// naming the folder that cannot be listed.
template <class Visit>
void walk(const std::string& dir, Visit&& visit) {
  const fs::path base(dir);
  std::error_code ec;
  for (fs::recursive_directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::file_type type = path_type(it->path().string());
    if (!visit(*it, it->path().lexically_relative(base).generic_string(), type)) it.disable_recursion_pending();
  }
  if (ec) throw IoError(fmt::format("{}: cannot list the run's files ({})", dir, ec.message()));
}

std::string hex(const unsigned char* md, unsigned int len) {
  static const char* h = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += h[md[i] >> 4];
    out += h[md[i] & 0xf];
  }
  return out;
}
}  // namespace

namespace {
/// Whether `inner` is `outer` or lies below it (both made canonical as far as they exist; component by component).
bool contains(const fs::path& outer, const fs::path& inner) {
  std::error_code ec;
  const fs::path o = fs::weakly_canonical(outer, ec), i = fs::weakly_canonical(inner, ec);
  auto oi = o.begin(), ii = i.begin();
  for (; oi != o.end() && ii != i.end(); ++oi, ++ii)
    if (*oi != *ii) break;
  // A trailing empty component (a path ending in '/') is no component.
  while (oi != o.end() && oi->empty()) ++oi;
  return oi == o.end();
}

/// Whether `d` holds an advplan run: its MANIFEST, a PSRO directory's psro.json, its work directory, or a work
/// directory being set up.
bool holds_a_run(const fs::path& d) {
  std::error_code ec;
  if (fs::is_regular_file(fs::symlink_status(d / kManifestFile, ec))) return true;
  if (fs::is_regular_file(fs::symlink_status(d / "psro.json", ec))) return true;
  for (const auto& e : fs::directory_iterator(d, ec)) {
    const std::string n = e.path().filename().string();
    if ((n == ".advplan-work" || n.rfind(".advplan-work-", 0) == 0) && e.is_directory(ec) && !e.is_symlink(ec))
      return true;
  }
  return false;
}
}  // namespace

DirectoryLock::DirectoryLock(const std::string& dir) {
  fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0) throw IoError(fmt::format("{}: cannot open the output directory to lock it ({})", dir, std::strerror(errno)));
  int rc;
  do rc = ::flock(fd_, LOCK_EX | LOCK_NB);
  while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK)
      throw IoError(fmt::format("{}: another advplan run or merge is writing into this directory (it holds its lock); "
                                "wait for it to end, or choose another --out",
                                dir));
    throw IoError(fmt::format("{}: cannot lock the output directory ({})", dir, std::strerror(err)));
  }
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

DirectoryLock& DirectoryLock::operator=(DirectoryLock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

fs::file_type path_type(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec && st.type() != fs::file_type::not_found)
    throw IoError(fmt::format("{}: the filesystem cannot resolve this path ({})", path, ec.message()));
  return st.type();
}

PreparedDirectory prepare_run_directory(const std::string& dir, DirMode mode, const std::vector<std::string>& inputs) {
  std::error_code ec;
  const fs::path d(dir);
  (void)path_type(dir);  // a symbolic link loop is named as one, not as "a file in the way"
  if (fs::exists(fs::symlink_status(d, ec)) && !fs::is_directory(d, ec))
    throw IoError(fmt::format("{}: output directory cannot be created (a file is in the way)", dir));
  PreparedDirectory out;
  if (!fs::is_directory(d, ec)) {
    fs::create_directories(d, ec);
    if (ec || !fs::is_directory(d))
      throw IoError(fmt::format("{}: output directory cannot be created ({})", dir, ec ? ec.message() : "not a directory"));
  }
  // The lock comes before any look inside: two runs started together cannot both find the directory empty.
  out.lock = DirectoryLock(dir);
  if (!is_empty_dir(d)) {
    if (mode == DirMode::resume) {
      out.had_files = true;
      return out;
    }
    if (mode == DirMode::fresh)
      throw IoError(fmt::format(
          "{}: output directory is not empty; a run writes into a fresh directory (pass --force to clear it first, "
          "or --resume to continue the interrupted run in it)",
          dir));
    // --force: refuse the obviously wrong targets before clearing.
    const fs::path canon = fs::weakly_canonical(d, ec);
    const char* home = std::getenv("HOME");
    if (canon == canon.root_path() || contains(canon, fs::current_path(ec)) ||
        (home && canon == fs::weakly_canonical(home, ec)))
      throw IoError(fmt::format("{}: --force will not clear the root, the home directory or one that holds the current "
                                "directory", dir));
    for (const auto& in : inputs)
      if (fs::exists(fs::symlink_status(in, ec)) && contains(canon, in))
        throw IoError(fmt::format("{}: --force will not clear a directory that holds an input of this command ({})",
                                  dir, in));
    if (!holds_a_run(d))
      throw IoError(fmt::format("{}: --force clears only a directory that holds an advplan run (a MANIFEST, a "
                                "psro.json or .advplan-work/), and this one holds none; it is left as it is",
                                dir));
    for (const auto& e : fs::directory_iterator(d, ec)) {
      fs::remove_all(e.path(), ec);  // removes symlinks themselves, never their targets
      if (ec) throw IoError(fmt::format("{}: cannot clear ({})", e.path().string(), ec.message()));
    }
    return out;
  }
  // Probe writability with an exclusively created temporary file.
  std::string probe = (d / ".advplan-write-test-XXXXXX").string();
  std::vector<char> name(probe.begin(), probe.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) throw IoError(fmt::format("{}: output directory is not writable ({})", dir, std::strerror(errno)));
  ::close(fd);
  ::unlink(name.data());
  return out;
}

std::string sha256_file(const std::string& path) {
  const int fd = open_readable(path);  // a FIFO planted in a run would hang the hash
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  std::vector<char> buf(1 << 16);
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      throw IoError(fmt::format("{}: cannot read file ({})", path, std::strerror(errno)));
    }
    if (n == 0) break;
    EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<std::size_t>(n));
  }
  ::close(fd);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx.get(), md, &len);
  return hex(md, len);
}

namespace {
/// Folders of results derived from the traces (tables, figures and the analyses of `advplan frontier` and
/// `advplan metagame`): they may be deleted, rebuilt or added after the run without breaking its MANIFEST.
constexpr const char* kDerivedDirs[] = {"tables", "figures", "frontier", "metagame", "regrade", "report"};
bool is_derived_dir(const std::string& rel) {
  for (const char* d : kDerivedDirs) {
    const std::size_t n = std::strlen(d);
    if (rel == d || (rel.size() > n + 1 && rel.compare(0, n, d) == 0 && rel[n] == '-' && rel.find('/') == std::string::npos))
      return true;
  }
  return false;
}
}  // namespace

namespace {
void check_output_path(fs::path d);
}  // namespace

void check_analysis_output_dir(const std::string& dest) {
  std::error_code ec;
  // Absolute first: "./tables" from inside a run has the run as its parent too.
  fs::path d = fs::absolute(dest, ec).lexically_normal();
  if (d.filename().empty()) d = d.parent_path();
  check_output_path(d);
  // And where it leads: a symbolic link (the folder itself or one above it) to a run's own folder is checked as
  // that folder.
  const fs::path real = fs::weakly_canonical(d, ec);
  if (!ec && real != d) check_output_path(real);
}

namespace {
void check_output_path(fs::path d) {
  std::error_code ec;
  if (fs::is_regular_file(fs::symlink_status(d / kManifestFile, ec)))
    throw IoError(fmt::format("{}: is a run directory (it has a MANIFEST); write an analysis into a derived folder "
                              "inside it (tables, frontier, regrade, report, ...) or elsewhere",
                              d.string()));
  // The nearest enclosing run (a folder with a MANIFEST), by the path as written.
  fs::path run;
  for (fs::path a = d.parent_path(); !a.empty(); a = a.parent_path()) {
    if (fs::is_regular_file(fs::symlink_status(a / kManifestFile, ec))) {
      run = a;
      break;
    }
    if (a == a.parent_path()) break;
  }
  if (run.empty()) return;
  const fs::path rel = d.lexically_relative(run);
  const std::string first = rel.begin()->string();
  if (!is_derived_dir(first))
    throw IoError(fmt::format("{}: inside the run {}, an analysis writes only into a derived folder (tables, figures, "
                              "frontier, metagame, regrade, report, or a name that starts with one of them and '-', e.g. {}/frontier-{}), "
                              "so that the run's MANIFEST still checks out",
                              d.string(), run.string(), run.string(), untrusted::safe_path_component(first)));
  fs::path at = run;
  for (const auto& part : rel) {
    at /= part;
    if (fs::is_symlink(fs::symlink_status(at, ec)))
      throw IoError(fmt::format("{}: is a symbolic link inside the run {}; advplan writes a run's derived results into "
                                "real folders only (remove the link, or pass --out elsewhere)",
                                at.string(), run.string()));
  }
}
}  // namespace

bool is_derived_path(const std::string& rel) {
  const auto slash = rel.find('/');
  return slash != std::string::npos && is_derived_dir(rel.substr(0, slash));
}

std::vector<std::pair<std::string, std::string>> list_run_files(const std::string& dir) {
  std::vector<std::pair<std::string, std::string>> out;
  walk(dir, [&](const fs::directory_entry&, const std::string& rel, fs::file_type type) {
    if (type == fs::file_type::directory) return rel != kWorkDir;
    if (type == fs::file_type::regular && rel != kManifestFile && rel != kMetadataFile) out.emplace_back(rel, std::string());
    return true;
  });
  std::sort(out.begin(), out.end());
  // The digests in parallel; a failure is reported for the first file in listing order that failed.
  std::vector<std::exception_ptr> failed(out.size());
  tbb::parallel_for(std::size_t{0}, out.size(), [&](std::size_t i) {
    try {
      out[i].second = sha256_file((fs::path(dir) / out[i].first).string());
    } catch (...) {
      failed[i] = std::current_exception();
    }
  });
  for (const auto& e : failed)
    if (e) std::rethrow_exception(e);
  return out;
}

std::string write_manifest(const std::string& dir) {
  std::string text;
  for (const auto& [rel, sum] : list_run_files(dir)) text += sum + "  " + rel + "\n";
  write_file_atomic((fs::path(dir) / kManifestFile).string(), text);
  return text;
}

std::vector<std::pair<std::string, std::string>> read_manifest(const std::string& dir) {
  const std::string path = (fs::path(dir) / kManifestFile).string();
  if (path_type(path) != fs::file_type::regular)
    throw CsvError(fmt::format("{}: missing, so {} is not a complete run (interrupted, or not written by advplan run)",
                               path, dir));
  // A MANIFEST is a line per file (about 90 bytes): 64 MiB is 700,000 files, past any run.
  std::istringstream in(read_text_file(path, kMaxDocumentBytes));
  std::vector<std::pair<std::string, std::string>> out;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.size() < 67 || line[64] != ' ' || line[65] != ' ' ||
        line.find_first_not_of("0123456789abcdef") < 64)
      throw CsvError(fmt::format("{}: line {}: expected '<sha256>  <file>'", path, line_no));
    out.emplace_back(line.substr(66), line.substr(0, 64));
  }
  return out;
}

void verify_run_directory(const std::string& dir) {
  if (path_type(dir) != fs::file_type::directory) throw CsvError(fmt::format("{}: not a run directory", dir));
  const auto listed = read_manifest(dir);
  std::map<std::string, std::string> want(listed.begin(), listed.end());
  for (const auto& [rel, sum] : listed) {
    if (is_derived_path(rel)) continue;
    const fs::path p = fs::path(dir) / rel;
    if (path_type(p.string()) != fs::file_type::regular)
      throw CsvError(fmt::format("{}: listed in MANIFEST but missing, so the run is incomplete", p.string()));
    if (sha256_file(p.string()) != sum)
      throw CsvError(fmt::format("{}: does not match its sha256 in MANIFEST (the file changed after the run)", p.string()));
  }
  walk(dir, [&](const fs::directory_entry& e, const std::string& rel, fs::file_type type) {
    if (type == fs::file_type::directory) return !is_derived_dir(rel);
    if (rel != kManifestFile && rel != kMetadataFile && !want.contains(rel))
      throw CsvError(fmt::format("{}: not listed in MANIFEST (a leftover of another run or of an interrupted write); "
                                 "this directory does not hold one run",
                                 e.path().string()));
    return true;
  });
}

void verify_derived_folders(const std::string& dir) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    const std::string rel = it->path().lexically_relative(dir).generic_string();
    if (rel == kWorkDir) {
      it.disable_recursion_pending();
      continue;
    }
    if (is_temporary_name(it->path().filename().string()))
      throw CsvError(fmt::format("{}: a temporary {} of an interrupted write, so a folder of this run may be half "
                                 "written; run the command that writes it again (report and rubric remove their own) "
                                 "or delete it",
                                 it->path().string(), it->is_directory(ec) ? "folder" : "file"));
  }
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string rel = e.path().filename().string();
    if (!is_derived_dir(rel) || e.is_symlink(ec) || !e.is_directory(ec)) continue;
    if (fs::is_regular_file(fs::symlink_status(e.path() / kOutputListFile, ec))) verify_output_dir(e.path().string());
  }
}

namespace {

/// The metadata's text, checked with the bounded parser into `j`.
std::string run_metadata_text(const std::string& dir, nlohmann::json& j) {
  const std::string path = run_metadata_path(dir);
  if (path_type(path) != fs::file_type::regular)
    throw IoError(fmt::format("{}: missing, so {} is not a run", path, dir));
  std::string text = read_text_file(path, kMaxDocumentBytes);
  if (const std::string why = untrusted::parse_json_bounded(text, j); !why.empty())
    throw CsvError(fmt::format("{}: {}", path, why));
  if (!j.is_object()) throw CsvError(fmt::format("{}: not a JSON object", path));
  return text;
}

}  // namespace

std::string run_metadata_path(const std::string& dir) { return (fs::path(dir) / kMetadataFile).string(); }

nlohmann::json read_run_metadata(const std::string& dir) {
  nlohmann::json j;
  (void)run_metadata_text(dir, j);
  return j;
}

nlohmann::ordered_json read_run_metadata_ordered(const std::string& dir) {
  nlohmann::json checked;
  return nlohmann::ordered_json::parse(run_metadata_text(dir, checked));
}

}  // namespace advplan::io
