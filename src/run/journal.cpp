// The run's work directory (docs/TRACES.md "Run directory and MANIFEST", "Resume"): the streams' files and the
// journal that counts their rows, the run key, a complete or interrupted run found again, and resuming from the
// last journal entry the files bear out.
#include <fmt/format.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/io/run_store.hpp"
#include "plan_set_key.hpp"
#include "run/run_internal.hpp"

namespace advplan::run_detail {
namespace fs = std::filesystem;

namespace {

/// Every well-formed entry of the journal, in order. A torn last line (kill -9 mid-write) and malformed lines are
/// skipped; entries whose counts go backwards are skipped too (each entry covers at least its predecessor).
std::vector<JournalEntry> journal_entries(const std::string& text, std::size_t nfiles) {
  std::vector<JournalEntry> out;
  std::size_t pos = 0;
  while (true) {
    const auto nl = text.find('\n', pos);
    if (nl == std::string::npos) break;
    std::istringstream ls(text.substr(pos, nl - pos));
    pos = nl + 1;
    JournalEntry e;
    e.end = pos;
    if (!(ls >> e.done >> e.rows >> e.failed >> e.with_plan)) continue;
    bool ok = true;
    for (std::size_t i = 0; i < nfiles && ok; ++i) {
      JournalEntry::File f;
      ok = static_cast<bool>(ls >> f.bytes >> f.rows >> f.sha256) && f.sha256.size() == 64 &&
           f.sha256.find_first_not_of("0123456789abcdef") == std::string::npos;
      e.files.push_back(std::move(f));
    }
    std::string extra;
    if (!ok || (ls >> extra)) continue;
    if (!out.empty()) {
      bool backwards = e.done < out.back().done;
      for (std::size_t i = 0; i < nfiles; ++i) backwards = backwards || e.files[i].bytes < out.back().files[i].bytes;
      if (backwards) continue;
    }
    out.push_back(std::move(e));
  }
  return out;
}


/// Whether each entry's files match `path`: its first bytes hash to the recorded sha256. One pass over the file;
/// `ok[j]` is cleared for entry j when they do not (or the file is shorter).
void verify_journal_file(const std::string& path, const std::vector<JournalEntry>& entries, std::size_t stream,
                         std::vector<bool>& ok) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    std::fill(ok.begin(), ok.end(), false);
    return;
  }
  io::Sha256 sha;
  std::uint64_t fed = 0;
  std::vector<char> buf(1 << 16);
  bool eof = false;
  for (std::size_t j = 0; j < entries.size(); ++j) {
    const std::uint64_t want = entries[j].files[stream].bytes;
    while (fed < want && !eof) {
      const auto n = ::read(fd, buf.data(), static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), want - fed)));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        eof = true;
        break;
      }
      sha.update(std::string_view(buf.data(), static_cast<std::size_t>(n)));
      fed += static_cast<std::uint64_t>(n);
    }
    if (fed != want || sha.hex() != entries[j].files[stream].sha256) ok[j] = false;
  }
  ::close(fd);
}


}  // namespace

void write_all(int fd, const std::string& data, const std::string& path) {
  const char* p = data.data();
  std::size_t n = data.size();
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) throw IoError(fmt::format("{}: write failed ({})", path, std::strerror(errno)));
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}


std::string header_text(const Stream& st) {
  std::string h;
  if (!st.jsonl) io::append_csv_row(h, st.header);
  return h;
}


std::string key_text(const RunKey& key) {
  std::string t;
  for (const auto& [k, v] : key) t += k + "=" + v + "\n";
  return t;
}


std::string Journal::line(std::size_t done, const RunSummary& summary, const std::vector<Stream>& streams) {
  std::string line =
      fmt::format("{} {} {} {}", done, summary.rows, summary.failed_rows, summary.scenarios_with_blue_plan);
  for (const Stream& st : streams) line += fmt::format(" {} {} {}", st.size, st.rows, st.sha.hex());
  return line + '\n';
}

void Journal::flush(std::vector<Stream>& streams, std::size_t done, const RunSummary& summary) const {
  for (Stream& st : streams) {
    if (st.buf.empty()) continue;
    write_all(st.fd, st.buf, st.work);
    st.sha.update(st.buf);
    st.size += st.buf.size();
    st.rows += st.buf_rows;
    st.buf.clear();
    st.buf_rows = 0;
    // On disk before the journal says so: after a power loss the journal never claims rows the files lost.
    if (::fdatasync(st.fd) != 0 && errno != EINVAL)
      throw IoError(fmt::format("{}: cannot sync ({})", st.work, std::strerror(errno)));
  }
  // The journal line is written after the rows it counts: a kill between the two loses only rows that the
  // resumed run truncates and writes again. Each entry carries every file's length and sha256, which a resume
  // checks before it trusts the entry.
  write_all(fd, line(done, summary, streams), path);
  if (::fdatasync(fd) != 0 && errno != EINVAL)
    throw IoError(fmt::format("{}: cannot sync ({})", path, std::strerror(errno)));
}

void Journal::close(std::vector<Stream>& streams) {
  ::close(fd);
  fd = -1;
  for (Stream& st : streams)
    if (st.fd >= 0) {
      if (::close(st.fd) != 0) throw IoError(fmt::format("{}: write failed ({})", st.work, std::strerror(errno)));
      st.fd = -1;
    }
}

/// The summary of the complete run in `dir` when it is this run (its recorded key compared field by field), or
/// nullopt when `dir` holds no complete run.
std::optional<RunSummary> complete_run(const fs::path& dir, const fs::path& work, const RunKey& key, std::size_t count) {
  if (!fs::exists(dir / io::kManifestFile) || !fs::exists(dir / io::kMetadataFile)) return std::nullopt;
  const std::string meta_path = (dir / io::kMetadataFile).string();
  const auto meta = nlohmann::json::parse(io::read_text_file(meta_path, io::kMaxDocumentBytes), nullptr, false);
  const nlohmann::json* recorded =
      meta.is_object() && meta.contains("run_key") && meta["run_key"].is_object() ? &meta["run_key"] : nullptr;
  for (const auto& [k, v] : key) {
    const std::string was = recorded && recorded->contains(k) && (*recorded)[k].is_string()
                                ? (*recorded)[k].get<std::string>()
                                : std::string();
    if (was != v) detail::refuse_plan_set_change(meta_path, "complete", k, was, v);
    if (was != v)
      throw ConfigError(fmt::format("{}: --resume: the complete run here has a different {} ({}, now {}); resume "
                                    "only the run it is, or pass --force to start over",
                                    meta_path, k, was.empty() ? "none" : untrusted::excerpt(was, 80), v));
  }
  // "Already complete" only while it still is: its files as its MANIFEST lists them, and that MANIFEST the one its
  // metadata recorded (a PSRO replays its complete runs through here).
  io::verify_run_directory(dir.string());
  const std::string manifest = (dir / io::kManifestFile).string();
  if (untrusted::string_member(meta, "manifest_sha256") != io::sha256_file(manifest))
    throw CsvError(fmt::format("{}: does not match the manifest_sha256 recorded in {}; --resume continues only the run "
                               "it recorded (pass --force to start over)",
                               manifest, meta_path));
  // A kill may have left the work directory half removed.
  fs::remove_all(work);
  RunSummary summary;
  if (meta.is_object()) {
    summary.rows = untrusted::count_member(meta, "rows");
    summary.failed_rows = untrusted::count_member(meta, "failed_rows");
    summary.scenarios_with_blue_plan = untrusted::count_member(meta, "scenarios_with_blue_plan");
  }
  summary.scenarios = count;
  // A run that evaluate --stop-when-decided stopped is complete with the prefix it played.
  if (meta.is_object() && meta.contains("stopped_early") && meta["stopped_early"] == true) {
    summary.scenarios = std::min(count, untrusted::count_member(meta, "scenarios"));
    summary.stopped = true;
  }
  summary.resumed_from = summary.scenarios;
  summary.already_complete = true;
  return summary;
}


/// Refuses an interrupted run whose recorded key differs from this run's in any field.
void check_interrupted_key(const fs::path& work, const RunKey& key) {
  const std::string recorded = io::read_text_file((work / kKey).string(), io::kMaxDocumentBytes);
  std::istringstream in(recorded);
  std::map<std::string, std::string> was;
  for (std::string line; std::getline(in, line);)
    if (auto eq = line.find('='); eq != std::string::npos) was[line.substr(0, eq)] = line.substr(eq + 1);
  for (const auto& [k, v] : key) {
    if (was[k] != v) detail::refuse_plan_set_change((work / kKey).string(), "interrupted", k, was[k], v);
    if (was[k] != v)
      throw ConfigError(fmt::format("{}: --resume: the interrupted run has a different {} ({}, now {}); resume it "
                                    "with its own config, or pass --force to start over",
                                    (work / kKey).string(), k, was[k].empty() ? "none" : was[k], v));
  }
}


/// The latest journal entry that the files bear out: each file's first bytes hash to what the entry recorded, and
/// the scenario and row counts agree with the rows (a power loss can leave a file shorter than its journal, or
/// zero-filled; a forged "all done" line does not match the rows). The journal is cut back to it.
JournalEntry verified_journal_entry(const fs::path& dir, const std::string& journal_path,
                                    const std::vector<Stream>& streams, std::size_t count) {
  const std::string journal_text = io::read_text_file(journal_path, io::kMaxListBytes);
  const std::vector<JournalEntry> entries = journal_entries(journal_text, streams.size());
  if (entries.empty()) throw IoError(fmt::format("{}: no complete entry; pass --force to start over", journal_path));
  std::vector<bool> ok(entries.size(), true);
  for (std::size_t i = 0; i < streams.size(); ++i) {
    const Stream& st = streams[i];
    const bool moved =
        !st.name.empty() && !fs::exists(fs::symlink_status(st.work)) && fs::exists(fs::symlink_status(dir / st.name));
    verify_journal_file(moved ? (dir / st.name).string() : st.work, entries, i, ok);
  }
  for (std::size_t j = 0; j < entries.size(); ++j) {
    const JournalEntry& e = entries[j];
    // stream 0 is scenarios.csv (one row per scenario), stream 1 per_scenario.csv (every row)
    if (e.files.size() < 2 || e.files[0].rows != e.done || e.files[1].rows != e.rows || e.done > count ||
        e.failed > e.rows || e.with_plan > e.done)
      ok[j] = false;
  }
  std::size_t pick = entries.size();
  for (std::size_t j = entries.size(); j-- > 0;)
    if (ok[j]) {
      pick = j;
      break;
    }
  if (pick == entries.size())
    throw IoError(fmt::format("{}: no entry matches the trace files beside it (they were cut short or changed after "
                              "it was written); pass --force to start over",
                              journal_path));
  const JournalEntry& entry = entries[pick];
  if (pick + 1 < entries.size())
    fmt::print(stderr,
               "advplan: {}: the last {} journal entr{} do not match the trace files (a crash or power loss cut "
               "them short); resuming from scenario {} of {}\n",
               journal_path, entries.size() - 1 - pick, entries.size() - 1 - pick == 1 ? "y does" : "ies do",
               entry.done, count);
  // The journal is cut back to that entry, so the next entry starts on a line of its own after it.
  if (::truncate(journal_path.c_str(), static_cast<off_t>(entry.end)) != 0)
    throw IoError(fmt::format("{}: cannot truncate ({})", journal_path, std::strerror(errno)));
  return entry;
}


/// Removes temporary files an interrupted atomic write left behind (".<name>.tmp-XXXXXX").
void remove_stale_temporaries(const std::string& dir) {
  std::vector<fs::path> stale;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    const std::string n = it->path().filename().string();
    if (it->is_directory() && n == kWork) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_directory() && n.size() > 1 && n[0] == '.' && n.find(".tmp-") != std::string::npos) stale.push_back(it->path());
  }
  for (const auto& p : stale) fs::remove(p);
}


/// Reopens each stream's work file cut back to `entry`, with its running digest over the bytes kept.
void reopen_streams(std::vector<Stream>& streams, const JournalEntry& entry, bool all_done) {
  for (std::size_t i = 0; i < streams.size(); ++i) {
    Stream& st = streams[i];
    st.size = entry.files[i].bytes;
    st.rows = entry.files[i].rows;
    const bool moved = all_done && !st.name.empty() && !fs::exists(st.work);
    if (moved) continue;  // finalisation had already moved it into place
    st.fd = ::open(st.work.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (st.fd < 0) throw IoError(fmt::format("{}: cannot reopen ({})", st.work, std::strerror(errno)));
    if (::ftruncate(st.fd, static_cast<off_t>(st.size)) != 0)
      throw IoError(fmt::format("{}: cannot truncate to its last complete scenario ({})", st.work, std::strerror(errno)));
    // The running digest again, over the bytes kept (verified above).
    std::vector<char> b(1 << 16);
    for (std::uint64_t at = 0; at < st.size;) {
      const auto n = ::pread(st.fd, b.data(), static_cast<std::size_t>(std::min<std::uint64_t>(b.size(), st.size - at)),
                             static_cast<off_t>(at));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw IoError(fmt::format("{}: cannot read back ({})", st.work, std::strerror(errno)));
      st.sha.update(std::string_view(b.data(), static_cast<std::size_t>(n)));
      at += static_cast<std::uint64_t>(n);
    }
    if (::lseek(st.fd, 0, SEEK_END) < 0) throw IoError(fmt::format("{}: cannot seek ({})", st.work, std::strerror(errno)));
  }
}


/// Creates the work directory under a fresh random name (mkdtemp) with the key, the headers and journal entry 0,
/// then renames it into place, so .advplan-work is always resumable. Returns the journal's descriptor.
int create_work_directory(const fs::path& dir, const fs::path& work, const RunKey& key, std::vector<Stream>& streams,
                          const std::string& journal_path, const RunSummary& summary) {
  std::string tmpl = (dir / (std::string(kWork) + "-XXXXXX")).string();
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  if (::mkdtemp(name.data()) == nullptr)
    throw IoError(fmt::format("{}: cannot create the work directory ({})", work.string(), std::strerror(errno)));
  const fs::path staging(name.data());
  io::write_file_atomic((staging / kKey).string(), key_text(key));
  for (Stream& st : streams) {
    const std::string p = (staging / fs::path(st.work).filename()).string();
    st.fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (st.fd < 0) throw IoError(fmt::format("{}: cannot create ({})", p, std::strerror(errno)));
    const std::string h = header_text(st);
    write_all(st.fd, h, st.work);
    st.sha.update(h);
    st.size = h.size();
    st.header_bytes = h.size();
  }
  const std::string jp = (staging / kJournal).string();
  const int fd = ::open(jp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError(fmt::format("{}: cannot create ({})", jp, std::strerror(errno)));
  write_all(fd, Journal::line(0, summary, streams), journal_path);
  // Headers and the first entry on disk before the directory becomes the run's work directory.
  for (Stream& st : streams) (void)::fdatasync(st.fd);
  (void)::fdatasync(fd);
  if (std::rename(staging.c_str(), work.c_str()) != 0)
    throw IoError(fmt::format("{}: cannot create the work directory ({})", work.string(), std::strerror(errno)));
  return fd;
}


}  // namespace advplan::run_detail
