// `advplan view`'s pages (report.hpp ViewSite): the report's data files, made on request from an index of byte
// offsets into the run's files.
#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/io/csv_stream.hpp"
#include "advplan/io/embedded_files.hpp"
#include "advplan/io/run_store.hpp"
#include "advplan/report/report.hpp"
#include "advplan/io/played_plans.hpp"
#include "advplan/run/trace_schema.hpp"
#include "report/served_files.hpp"
#include "report/site.hpp"

namespace advplan::report {
namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace site;

namespace {

constexpr std::size_t kMaxRecordBytes = std::size_t{16} << 20;  ///< one CSV record or JSON line
constexpr std::size_t kMaxBlockBytes = std::size_t{256} << 20;   ///< one scenario's records in one file
/// The run's files the site reads on request (ViewSite::get), and those it reads only while it starts.
const std::vector<std::string> kServedFiles{"scenarios.csv",     "per_scenario.csv",         "candidates.csv",
                                            "plans.jsonl",       "transcripts.jsonl",        "rubric/transcripts.jsonl",
                                            "rubric/verdicts.jsonl", "council_trace.csv"};
const std::vector<std::string> kReadAtStart{"bootstrap_summary.csv", "run_metadata.json", "MANIFEST"};

/// Where each scenario's records lie in one file: [begin, end) per scenario (0, 0: none), and its header line.
struct FileIndex {
  fs::path path;
  std::string header;  ///< CSV: the header record with its newline; JSONL: empty
  std::vector<std::pair<std::uint64_t, std::uint64_t>> range;
  bool present = false;
};

/// Indexes `file` of the run by the scenario each record names: the first CSV field, or the JSON line's `key`.
FileIndex index_file(const fs::path& dir, const std::string& file, const std::map<std::string, std::size_t>& ids,
                     bool csv, const char* key) {
  FileIndex ix;
  ix.path = dir / file;
  ix.range.assign(ids.size(), {0, 0});
  // Through real folders only: the MANIFEST check does not look into a linked folder.
  std::error_code ec;
  fs::path at = dir;
  for (const auto& part : fs::path(file)) {
    at /= part;
    if (fs::is_symlink(fs::symlink_status(at, ec))) return ix;
  }
  if (!fs::is_regular_file(ix.path)) return ix;
  ix.present = true;
  bool first = true;
  std::size_t line = 0;
  const auto format = csv ? io::RecordFormat::csv : io::RecordFormat::json_lines;
  io::for_each_record(ix.path.string(), format, kMaxRecordBytes, [&](std::uint64_t begin, const std::string& rec) {
    ++line;
    if (csv && first) {
      first = false;
      ix.header = rec;
      return;
    }
    std::string id;
    if (csv) {
      id = io::csv_first_field(rec);
    } else {
      if (rec.find_first_not_of(" \r\n") == std::string::npos) return;
      json j;
      const std::string why = untrusted::parse_json_bounded(rec, j);
      if (!why.empty() || !j.is_object())
        throw CsvError(fmt::format("{}: line {}: {}", ix.path.string(), line, why.empty() ? "not a JSON object" : why));
      if (!j.contains(key) || !j[key].is_string()) return;
      id = j[key].get<std::string>();
    }
    const auto it = ids.find(id);
    if (it == ids.end()) return;
    auto& [b, e] = ix.range[it->second];
    if (e == 0) b = begin;
    e = begin + rec.size();
    if (e - b > kMaxBlockBytes)
      throw CsvError(fmt::format("{}: the records of scenario {} span more than {} MiB", ix.path.string(),
                                 untrusted::excerpt(id, 60), kMaxBlockBytes >> 20));
  });
  return ix;
}

std::string read_block(const FileIndex& ix, std::size_t i) {
  const auto [b, e] = ix.range[i];
  if (e <= b) return "";
  std::ifstream in(ix.path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(b));
  std::string out(e - b, '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  if (static_cast<std::uint64_t>(in.gcount()) != e - b)
    throw RunChanged(fmt::format("{}: changed since view started (cut at byte {})", ix.path.string(), b));
  return out;
}

bool parse_index(std::string_view s, std::size_t& out) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

}  // namespace

struct ViewSite::Impl {
  ReportRun run;
  fs::path dir;
  std::string overview;  ///< data/overview.js
  std::vector<std::string> ids;
  std::map<std::string, std::size_t> index;
  FileIndex scenarios, per, candidates, plans, transcripts, judge_transcripts, verdicts, council;
  std::optional<ServedFiles> files;  ///< the identities of the files read on request, as the MANIFEST check saw them
  std::shared_ptr<const RunPlan> replay;  ///< the policies that make the plans again, for a run that kept none

  /// The rows of scenarios' records in `ix` whose first field is scenario `i`, as a table with ix's header.
  io::CsvTable block_table(const FileIndex& ix, std::size_t i) const {
    io::CsvTable t = io::CsvTable::parse(ix.header + read_block(ix, i), ix.path.string());
    io::CsvTable out(t.header());
    out.set_source(ix.path.string());
    if (!t.has_col("scenario_id")) return out;
    const std::size_t c = t.col("scenario_id");
    for (const auto& r : t.rows())
      if (r[c] == ids[i]) out.add(r);
    return out;
  }
  /// Scenario i's lines of `ix` whose `key` names it, streamed line by line (never the whole block) into `into`,
  /// which keeps what the page shows of them (site.hpp CallList).
  void block_lines(const FileIndex& ix, std::size_t i, const char* key, CallList& into) const {
    const auto [b, e] = ix.range[i];
    if (!ix.present || e <= b) return;
    for_each_line(ix.path, b, e, [&](std::string_view text, std::size_t) {
      json j;
      if (untrusted::parse_json_bounded(text, j).empty() && j.is_object() && j.contains(key) && j[key] == ids[i])
        into.add(std::move(j), text.size());
    });
  }

  std::string scenario_page(std::size_t i) const {
    json s = json::object();
    const io::CsvTable row = block_table(scenarios, i);
    s["row"] = row.size() ? row_object(row, 0) : json();
    const io::CsvTable rows = block_table(per, i);
    schema::check_ranges(rows, schema::per_scenario_ranges());
    s["rows"] = json::array();
    for (std::size_t r = 0; r < rows.size(); ++r) s["rows"].push_back(row_object(rows, r));
    for (const char* k : {"candidates", "plans", "transcripts", "verdicts", "council"}) s[k] = json::array();
    const io::CsvTable cand = block_table(candidates, i);
    schema::check_ranges(cand, schema::candidates_ranges());
    for (std::size_t r = 0; r < cand.size(); ++r) s["candidates"].push_back(row_object(cand, r));
    if (plans.present)
      for (const PlayedPlan& p : parse_played_plans(read_block(plans, i), plans.path.string(), 0))
        if (p.scenario_id == ids[i]) s["plans"].push_back(plan_entry(p));
    CallList calls, graded;  // as the static report bounds them, without its site-wide budget
    block_lines(transcripts, i, "scenario_id", calls);
    block_lines(judge_transcripts, i, "scenario_id", calls);
    block_lines(verdicts, i, "case_id", graded);
    calls.finish(s, "transcripts");
    graded.finish(s, "verdicts");
    if (council.present) {
      const io::CsvTable c = block_table(council, i);
      for (std::size_t r = 0; r < c.size(); ++r) s["council"].push_back(row_object(c, r));
    }
    std::optional<Scenario> sc;
    if (run.cfg && i < corpus_size(*run.cfg)) {
      Scenario made = corpus_scenario(*run.cfg, i);
      if (made.id == ids[i]) sc = std::move(made);
    }
    replay_into(s, sc ? &*sc : nullptr, replay.get());
    finish_scenario(s, ids[i], sc ? &*sc : nullptr, dir);
    return data_call(fmt::format("s/{}", i), s);
  }

  std::string rows_page(std::size_t p) const {
    json data = json::array();
    json cols = json::array({"scenario"});
    for (const auto& h : schema::per_scenario(run.cfg && run.cfg->samples > 1)) cols.push_back(h);
    for (std::size_t i = p * kViewPage; i < ids.size() && i < (p + 1) * kViewPage; ++i) {
      const io::CsvTable rows = block_table(per, i);
      schema::check_ranges(rows, schema::per_scenario_ranges());
      for (const auto& r : rows.rows()) {
        json x = json::array({i});
        for (const auto& v : r) x.push_back(cell(v));
        data.push_back(std::move(x));
      }
    }
    return data_call(fmt::format("rows/{}", p), json{{"columns", std::move(cols)}, {"data", std::move(data)}});
  }
  Response served_page(bool rows, std::size_t i) const;
};

/// Page i, between two checks that the files it reads are those of the start: an edit made while the page was read
/// is refused too.
ViewSite::Response ViewSite::Impl::served_page(bool rows, std::size_t i) const {
  files->check();
  if (!rows) files->check_map(i, ids[i]);
  Response r{"text/javascript", rows ? rows_page(i) : scenario_page(i)};
  files->check();
  if (!rows) files->check_map(i, ids[i]);
  return r;
}

ViewSite::ViewSite(const ReportRun& run) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.run = run;
  m.dir = fs::path(run.dir);
  // The files' identities are recorded before the MANIFEST check and confirmed after the index, so what is served
  // later is what the check read.
  m.files.emplace(m.dir, kReadAtStart, kServedFiles);
  io::verify_run_directory(run.dir);  // one complete run, matching its MANIFEST
  const json meta = metadata_of(m.dir);
  // The scenario ids, streamed: their order is the scenarios' index.
  std::size_t line = 0;
  std::string header;
  const std::string scenarios = (m.dir / "scenarios.csv").string();
  io::for_each_record(scenarios, io::RecordFormat::csv, kMaxRecordBytes, [&](std::uint64_t, const std::string& rec) {
    if (line++ == 0) {
      header = rec;
      return;
    }
    std::string id = io::csv_first_field(rec);
    if (!m.index.emplace(id, m.ids.size()).second)
      throw CsvError(fmt::format("{}: line {}: scenario {} is listed twice", (m.dir / "scenarios.csv").string(), line,
                                 untrusted::excerpt(id, 60)));
    m.ids.push_back(std::move(id));
  });
  m.scenarios = index_file(m.dir, "scenarios.csv", m.index, true, nullptr);
  m.per = index_file(m.dir, "per_scenario.csv", m.index, true, nullptr);
  {
    const io::CsvTable h = io::CsvTable::parse(m.per.header, m.per.path.string());
    if (h.header() != schema::per_scenario() && h.header() != schema::per_scenario_sampled())
      throw CsvError(fmt::format("{}: unexpected columns (docs/TRACES.md)", m.per.path.string()));
  }
  m.candidates = index_file(m.dir, "candidates.csv", m.index, true, nullptr);
  m.plans = index_file(m.dir, "plans.jsonl", m.index, false, "scenario_id");
  if (!m.plans.present) m.replay = plan_replay(run.cfg, m.dir);
  m.transcripts = index_file(m.dir, "transcripts.jsonl", m.index, false, "scenario_id");
  m.judge_transcripts = index_file(m.dir, "rubric/transcripts.jsonl", m.index, false, "scenario_id");
  m.verdicts = index_file(m.dir, "rubric/verdicts.jsonl", m.index, false, "case_id");
  m.council = index_file(m.dir, "council_trace.csv", m.index, true, nullptr);
  const io::CsvTable boot = io::CsvTable::read((m.dir / "bootstrap_summary.csv").string(), schema::bootstrap_summary());
  json o = overview_head(run, meta, io::CsvTable(schema::scenarios()), boot, untrusted::count_member(meta, "rows"));
  o["run"]["scenarios"] = m.ids.size();
  o["scenarios"] = json::array();
  o["paged"] = {{"page_size", kViewPage}, {"pages", (m.ids.size() + kViewPage - 1) / kViewPage}};
  m.overview = data_call("overview", o);
  m.files->confirm(m.ids);
}

ViewSite::~ViewSite() = default;

std::size_t ViewSite::scenarios() const { return impl_->ids.size(); }

std::optional<ViewSite::Response> ViewSite::get(std::string_view path) const {
  const Impl& m = *impl_;
  static const std::map<std::string_view, std::pair<const char*, const char*>> assets{
      {"/", {"text/html; charset=utf-8", "src/report/assets/index.html"}},
      {"/index.html", {"text/html; charset=utf-8", "src/report/assets/index.html"}},
      {"/app.js", {"text/javascript", "src/report/assets/app.js"}},
      {"/style.css", {"text/css", "src/report/assets/style.css"}},
      {"/vendor/d3.min.js", {"text/javascript", "vendor/d3.min.js"}},
      {"/vendor/leaflet.js", {"text/javascript", "vendor/leaflet.js"}},
      {"/vendor/leaflet.css", {"text/css", "vendor/leaflet.css"}},
      {"/vendor/dagre.min.js", {"text/javascript", "vendor/dagre.min.js"}}};
  if (const auto it = assets.find(path); it != assets.end())
    return Response{it->second.first, std::string(io::embedded_file(it->second.second).value_or(""))};
  if (path == "/data/overview.js") return Response{"text/javascript", m.overview};
  for (const auto& [prefix, rows] : {std::pair{std::string_view("/data/s/"), false}, {"/data/rows/", true}}) {
    if (!path.starts_with(prefix) || !path.ends_with(".js")) continue;
    std::size_t i = 0;
    if (!parse_index(path.substr(prefix.size(), path.size() - prefix.size() - 3), i)) return std::nullopt;
    // By division: page i exists when i < ceil(scenarios / kViewPage) (at least one page, maybe empty).
    const std::size_t pages = std::max<std::size_t>((m.ids.size() + kViewPage - 1) / kViewPage, 1);
    if (i >= (rows ? pages : m.ids.size())) return std::nullopt;
    return m.served_page(rows, i);
  }
  return std::nullopt;
}

}  // namespace advplan::report
