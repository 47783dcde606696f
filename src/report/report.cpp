#include "advplan/report/report.hpp"

#include "report/site.hpp"

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "advplan/core/error.hpp"
#include "advplan/core/plan_json.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/io/embedded_files.hpp"
#include "advplan/io/text_lines.hpp"
#include "advplan/io/run_store.hpp"
#include "advplan/io/played_plans.hpp"
#include "advplan/run/summaries.hpp"
#include "advplan/run/trace_schema.hpp"
#include "advplan/stats/statistics.hpp"

namespace advplan::report {
namespace site {
namespace fs = std::filesystem;
using io::CsvTable;
using json = nlohmann::json;

/// A JSON value as the argument of a data file's call: ASCII only (no U+2028 line terminator can end a string
/// early), invalid UTF-8 replaced.
std::string data_call(const std::string& key, const json& value) {
  return fmt::format("ADVPLAN_DATA({}, {});\n", json(key).dump(), value.dump(-1, ' ', true, json::error_handler_t::replace));
}

/// A number cell as JSON: null when empty.
json cell(const std::string& s) {
  if (s.empty()) return nullptr;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return s;
  return v;
}

/// A CSV row as an object, numbers as numbers.
json row_object(const CsvTable& t, std::size_t i) {
  json o = json::object();
  for (std::size_t c = 0; c < t.header().size(); ++c) o[t.header()[c]] = cell(t.rows()[i][c]);
  return o;
}

json metadata_of(const fs::path& dir) { return io::read_run_metadata(dir.string()); }

/// A text field of run_metadata.json (outside the MANIFEST: anything else reads as "").
std::string text_of(const json& meta, const char* key, const std::string& otherwise = "") {
  return meta.contains(key) && meta[key].is_string() ? meta[key].get<std::string>() : otherwise;
}

/// dir/rel when it is a regular file reached through real folders only (no component a symbolic link: the MANIFEST
/// check does not look into a linked folder), else nullopt.
std::optional<fs::path> run_file(const fs::path& dir, const fs::path& rel) {
  std::error_code ec;
  fs::path at = dir;
  for (const auto& part : rel) {
    at /= part;
    if (fs::is_symlink(fs::symlink_status(at, ec))) return std::nullopt;
  }
  if (!fs::is_regular_file(fs::symlink_status(at, ec))) return std::nullopt;
  return at;
}

json plan_entry(const PlayedPlan& p) {
  return {{"condition", p.condition},
          {"sample", p.sample},
          {"side", std::string(to_string(p.side))},
          {"policy", p.policy},
          {"plan", p.plan ? to_json(*p.plan) : json()},
          {"failure", p.failure}};
}

void finish_scenario(json& s, const std::string& id, const Scenario* sc, const fs::path& dir) {
  s["scenario"] = sc ? to_json(*sc, ScenarioJson::without_seed_plans) : json();
  // Its map (terrain: geo): maps/<id>.geojson, a file the MANIFEST covers; an id that is not a plain file name
  // names no map.
  s["map"] = nullptr;
  if (untrusted::safe_path_component(id) == id)
    if (const auto m = run_file(dir, fs::path("maps") / (id + ".geojson"))) {
      json g;
      if (untrusted::parse_json_bounded(io::read_text_file(m->string(), io::kMaxDocumentBytes), g).empty() &&
          g.is_object())
        s["map"] = std::move(g);
    }
}

/// The files the run's MANIFEST lists (its lines), read after verify_run_directory has hashed them: the overview
/// says how many were checked without hashing the run a second time.
std::size_t manifest_entries(const fs::path& dir) {
  const std::string text = io::read_text_file((dir / io::kManifestFile).string(), io::kMaxListBytes);
  std::size_t n = 0;
  io::for_each_text_line(text, [&](std::string_view line, std::size_t) { n += line.empty() ? 0 : 1; });
  return n;
}

json overview_head(const ReportRun& run, const json& meta, const CsvTable& scenarios, const CsvTable& boot,
                   std::size_t rows) {
  const fs::path dir(run.dir);
  json o;
  o["run"] = {{"dir", fs::path(run.dir).filename().string()},
              {"name", run.cfg ? run.cfg->name : std::string()},
              {"config_source", text_of(meta, "config_source")},
              {"config_text", text_of(meta, "config_text")},
              {"seed", meta.contains("seed") ? meta["seed"] : json()},
              {"command", text_of(meta, "command", "run")},
              {"version", text_of(meta, "version")},
              {"commit", text_of(meta, "git_commit")},
              {"manifest", fmt::format("checked: {} files match the MANIFEST", manifest_entries(dir))},
              {"scenarios", scenarios.size()},
              {"rows", rows},
              {"samples", run.cfg ? run.cfg->samples : 1},
              {"summary_method", text_of(meta, "summary_method")}};
  o["conditions"] = meta.contains("conditions") && meta["conditions"].is_array() ? meta["conditions"] : json::array();
  o["metrics"] = schema::summarised_metrics();
  json summary = json::object();
  for (std::size_t i = 0; i < boot.size(); ++i) {
    if (boot.at(i, "scope") != "all") continue;
    summary[boot.at(i, "condition")][boot.at(i, "metric")] = {cell(boot.at(i, "n")), cell(boot.at(i, "mean")),
                                                               cell(boot.at(i, "ci_lo")), cell(boot.at(i, "ci_hi"))};
  }
  o["summary"] = std::move(summary);
  if (fs::is_regular_file(dir / "budget_curve.csv")) {
    const CsvTable b = CsvTable::read((dir / "budget_curve.csv").string(), schema::budget_curve());
    json curve = json::array();
    for (std::size_t i = 0; i < b.size(); ++i) curve.push_back(row_object(b, i));
    o["budget_curve"] = std::move(curve);
  }
  // An evaluate run's verdicts, scorecard and robustness curves (evaluation/, covered by the MANIFEST).
  for (const char* name : {"verdicts", "scorecard", "robustness"})
    if (const auto f = run_file(dir, fs::path("evaluation") / (std::string(name) + ".csv"))) {
      const CsvTable t = CsvTable::read(f->string());
      json rows = json::array();
      for (std::size_t i = 0; i < t.size(); ++i) rows.push_back(row_object(t, i));
      o["evaluation"][name] = std::move(rows);
    }
  json sc_list = json::array();
  for (std::size_t i = 0; i < scenarios.size(); ++i)
    sc_list.push_back({scenarios.at(i, "scenario_id"), scenarios.at(i, "template"), scenarios.at(i, "terrain_family"),
                       scenarios.at(i, "framing")});
  o["scenarios"] = std::move(sc_list);
  // A run on a user's map: the map once, which every scenario's page draws its own layer on.
  if (json bases = map_bases(dir); !bases.empty()) o["map_bases"] = std::move(bases);
  return o;
}

}  // namespace site

namespace {
using namespace site;
namespace fs = std::filesystem;
using io::CsvTable;
using json = nlohmann::json;

/// Everything the site shows of one run.
struct RunData {
  json overview;
  std::vector<std::pair<std::string, std::string>> scenario_files;  ///< (data/[b/]s/<i>.js, content)
  CsvTable per;     ///< per_scenario.csv, sample means when sampled
  std::map<std::string, std::size_t> index;  ///< scenario id -> its row in scenarios.csv
};

RunData read_run_data(const ReportRun& run, const std::string& prefix) {
  const fs::path dir(run.dir);
  io::verify_run_directory(run.dir);  // one complete run, matching its MANIFEST
  RunData d;
  const json meta = metadata_of(dir);
  const CsvTable scenarios = CsvTable::read((dir / "scenarios.csv").string(), schema::scenarios());
  CsvTable per = schema::read_per_scenario((dir / "per_scenario.csv").string());
  if (per.size() > kMaxReportRows)
    throw CsvError(fmt::format("{}: {} rows, more than the {} a report bundles: serve it with advplan view",
                               (dir / "per_scenario.csv").string(), per.size(), kMaxReportRows));
  const CsvTable boot = CsvTable::read((dir / "bootstrap_summary.csv").string(), schema::bootstrap_summary());
  for (std::size_t i = 0; i < scenarios.size(); ++i) d.index.emplace(scenarios.at(i, "scenario_id"), i);

  d.overview = overview_head(run, meta, scenarios, boot, per.size());
  json& o = d.overview;
  // The rows, column-major names once: scenario index, then the per_scenario columns.
  json cols = json::array({"scenario"});
  for (const auto& h : per.header()) cols.push_back(h);
  json rows = json::array();
  const std::size_t cs = per.col("scenario_id");
  std::map<std::size_t, std::vector<std::size_t>> rows_of;  // scenario index -> its rows
  for (std::size_t i = 0; i < per.size(); ++i) {
    const auto it = d.index.find(per.rows()[i][cs]);
    if (it == d.index.end())
      throw CsvError(fmt::format("{}: line {}: scenario {} is not in scenarios.csv", per.source(), i + 2,
                                 untrusted::excerpt(per.rows()[i][cs], 60)));
    json r = json::array({it->second});
    for (const auto& v : per.rows()[i]) r.push_back(cell(v));
    rows.push_back(std::move(r));
    rows_of[it->second].push_back(i);
  }
  o["rows"] = {{"columns", std::move(cols)}, {"data", std::move(rows)}};

  // Per scenario: what the run recorded of it, bucketed by its row in scenarios.csv.
  std::vector<json> per_scenario(scenarios.size(), json::object());
  auto bucket = [&](const std::string& id) -> json* {
    const auto it = d.index.find(id);
    return it == d.index.end() ? nullptr : &per_scenario[it->second];
  };
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    json& s = per_scenario[i];
    s["row"] = row_object(scenarios, i);
    s["rows"] = json::array();
    for (std::size_t r : rows_of[i]) s["rows"].push_back(row_object(per, r));
    for (const char* k : {"candidates", "plans", "transcripts", "verdicts", "council"}) s[k] = json::array();
  }
  {
    const CsvTable cand = CsvTable::read((dir / "candidates.csv").string());
    schema::check_ranges(cand, schema::candidates_ranges());
    for (std::size_t i = 0; i < cand.size(); ++i)
      if (json* s = bucket(cand.at(i, "scenario_id"))) (*s)["candidates"].push_back(row_object(cand, i));
  }
  if (fs::is_regular_file(dir / "plans.jsonl"))
    for (const PlayedPlan& p : read_played_plans((dir / "plans.jsonl").string()))
      if (json* s = bucket(p.scenario_id)) (*s)["plans"].push_back(plan_entry(p));
  // The model calls and verdicts, streamed line by line into each scenario's bounded list (CallList): the site
  // shows at most kMaxSiteCallBytes of them over all its pages.
  std::size_t budget = kMaxSiteCallBytes;
  std::vector<CallList> calls(scenarios.size(), CallList(&budget)), verdicts(scenarios.size(), CallList(&budget));
  const auto collect = [&](const char* rel, const char* key, std::vector<CallList>& into) {
    const auto f = run_file(dir, rel);
    if (!f) return;
    for_each_line(*f, 0, 0, [&](std::string_view text, std::size_t line) {
      if (text.empty()) return;
      json j;
      const std::string why = untrusted::parse_json_bounded(text, j);
      if (!why.empty() || !j.is_object())
        throw CsvError(fmt::format("{}: line {}: {}", f->string(), line, why.empty() ? "not a JSON object" : why));
      if (!j.contains(key) || !j[key].is_string()) return;
      if (const auto it = d.index.find(j[key].get<std::string>()); it != d.index.end())
        into[it->second].add(std::move(j), text.size());
    });
  };
  collect("transcripts.jsonl", "scenario_id", calls);
  collect("rubric/transcripts.jsonl", "scenario_id", calls);
  collect("rubric/verdicts.jsonl", "case_id", verdicts);
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    calls[i].finish(per_scenario[i], "transcripts");
    verdicts[i].finish(per_scenario[i], "verdicts");
  }
  if (fs::is_regular_file(dir / "council_trace.csv")) {
    const CsvTable c = CsvTable::read((dir / "council_trace.csv").string());
    if (c.has_col("scenario_id"))
      for (std::size_t i = 0; i < c.size(); ++i)
        if (json* s = bucket(c.at(i, "scenario_id"))) (*s)["council"].push_back(row_object(c, i));
  }
  // The scenario itself (assets, roles, terrain) from the config the run recorded: generation is a function of
  // the config and the seed, as the run made it.
  // Only when the recorded config's corpus is the run's size: run_metadata.json is outside the MANIFEST, and an
  // edited one could ask for ten million scenarios.
  std::map<std::string, Scenario> made;
  if (run.cfg && corpus_size(*run.cfg) == scenarios.size())
    for (Scenario& sc : generate_corpus(*run.cfg)) made.emplace(sc.id, std::move(sc));
  // A run that kept no plans gets its built-in policies' plans made again (docs/REPORT.md "Plans made again").
  if (const auto replay = plan_replay(run.cfg, dir))
    tbb::parallel_for(std::size_t{0}, scenarios.size(), [&](std::size_t i) {
      const auto it = made.find(scenarios.at(i, "scenario_id"));
      replay_into(per_scenario[i], it == made.end() ? nullptr : &it->second, replay.get());
    });
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    const std::string& id = scenarios.at(i, "scenario_id");
    const auto it = made.find(id);
    finish_scenario(per_scenario[i], id, it == made.end() ? nullptr : &it->second, dir);
    d.scenario_files.emplace_back(fmt::format("data/{}s/{}.js", prefix, i),
                                  data_call(fmt::format("{}s/{}", prefix, i), per_scenario[i]));
  }
  d.per = per.has_col("sample") ? sample_means(per) : std::move(per);
  return d;
}

/// Paired differences A - B per condition both runs have, over their shared scenarios (advantage and BLUE win
/// rate), each with a percentile bootstrap interval, and the scenarios by the size of the difference.
json comparison(const RunData& a, const RunData& b, const BootstrapSettings& bs) {
  json out = json::array();
  const CsvTable ok_a = ok_rows(a.per), ok_b = ok_rows(b.per);
  for (const std::string& cond : distinct_values(ok_a, "condition")) {
    std::map<std::string, std::pair<double, double>> va, vb;  // scenario -> (advantage, win rate)
    for (std::size_t i = 0; i < ok_a.size(); ++i)
      if (ok_a.at(i, "condition") == cond)
        va[ok_a.at(i, "scenario_id")] = {ok_a.real(i, "advantage"), ok_a.real(i, "blue_win_rate")};
    for (std::size_t i = 0; i < ok_b.size(); ++i)
      if (ok_b.at(i, "condition") == cond)
        vb[ok_b.at(i, "scenario_id")] = {ok_b.real(i, "advantage"), ok_b.real(i, "blue_win_rate")};
    std::vector<double> d_adv, d_win;
    json list = json::array();
    for (const auto& [id, x] : va) {
      const auto it = vb.find(id);
      if (it == vb.end()) continue;
      const double da = x.first - it->second.first, dw = x.second - it->second.second;
      d_adv.push_back(da);
      d_win.push_back(dw);
      const bool flipped = (x.first > 0.5) != (it->second.first > 0.5);
      list.push_back({{"scenario_id", id}, {"a", a.index.at(id)}, {"b", b.index.at(id)}, {"advantage_a", x.first},
                      {"advantage_b", it->second.first}, {"diff", da}, {"win_diff", dw}, {"flipped", flipped}});
    }
    if (d_adv.empty()) continue;
    // Largest |difference| first; ties by scenario id, so the order is the same every time.
    std::stable_sort(list.begin(), list.end(), [](const json& x, const json& y) {
      return std::abs(x["diff"].get<double>()) > std::abs(y["diff"].get<double>());
    });
    const Interval ia = bootstrap_mean(d_adv, bs.resamples, bs.seed, "report-against|" + cond + "|advantage");
    const Interval iw = bootstrap_mean(d_win, bs.resamples, bs.seed, "report-against|" + cond + "|blue_win_rate");
    out.push_back({{"condition", cond},
                   {"n", ia.n},
                   {"advantage", {ia.mean, ia.lo, ia.hi}},
                   {"blue_win_rate", {iw.mean, iw.lo, iw.hi}},
                   {"scenarios", std::move(list)}});
  }
  return out;
}

std::string asset(std::string_view name) {
  const auto text = io::embedded_file(name);
  if (!text) throw Error(fmt::format("report: the asset {} is not compiled in", name));
  return std::string(*text);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> report_files(const ReportRun& run, const ReportRun* against) {
  RunData a = read_run_data(run, "");
  std::vector<std::pair<std::string, std::string>> files;
  if (against) {
    RunData b = read_run_data(*against, "b/");
    // B and the seed of RUN_DIR's summaries; a streamed run records no B (0), so its config's (within the config's
    // bounds, whatever the metadata says).
    const CsvTable boot =
        CsvTable::read((fs::path(run.dir) / "bootstrap_summary.csv").string(), schema::bootstrap_summary());
    BootstrapSettings bs{2000, 7};
    if (run.cfg) bs = {run.cfg->bootstrap.resamples, run.cfg->bootstrap.seed};
    if (boot.size() && boot.at(0, "resamples") != "0") bs = recorded_bootstrap(boot);
    a.overview["against"] = {{"run", b.overview["run"]}, {"conditions", comparison(a, b, bs)},
                             {"scenarios", b.overview["scenarios"]}};
    if (b.overview.contains("map_bases")) a.overview["against"]["map_bases"] = b.overview["map_bases"];
    files.insert(files.end(), std::make_move_iterator(b.scenario_files.begin()),
                 std::make_move_iterator(b.scenario_files.end()));
  }
  files.emplace_back("index.html", asset("src/report/assets/index.html"));
  files.emplace_back("app.js", asset("src/report/assets/app.js"));
  files.emplace_back("style.css", asset("src/report/assets/style.css"));
  files.emplace_back("vendor/d3.min.js", asset("vendor/d3.min.js"));
  files.emplace_back("vendor/leaflet.js", asset("vendor/leaflet.js"));
  files.emplace_back("vendor/leaflet.css", asset("vendor/leaflet.css"));
  files.emplace_back("vendor/dagre.min.js", asset("vendor/dagre.min.js"));
  files.emplace_back("data/overview.js", data_call("overview", a.overview));
  files.insert(files.end(), std::make_move_iterator(a.scenario_files.begin()),
               std::make_move_iterator(a.scenario_files.end()));
  return files;
}

}  // namespace advplan::report
