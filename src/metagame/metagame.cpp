// The meta-game from trace CSVs: reading the payoff cells exactly, the scenario bootstrap, and the output files
// (docs/METRICS.md "Meta-game"; the solver is metagame_solver.cpp, alpha-Rank metagame_alpharank.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "advplan/core/error.hpp"
#include "advplan/core/random.hpp"
#include "advplan/metagame/metagame.hpp"
#include "advplan/run/config.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/run/summaries.hpp"
#include "advplan/run/sweep_points.hpp"
#include "advplan/run/trace_schema.hpp"

namespace advplan::metagame {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

/// A 6-decimal trace cell as an exact count of millionths ("-0.123457" -> -123457).
std::int64_t micro_units(const std::string& s, const std::string& where) {
  std::size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
  std::int64_t whole = 0, frac = 0;
  int digits = 0;
  bool any = false;
  for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i, any = true) {
    whole = whole * 10 + (s[i] - '0');
    if (whole > 1000000000000LL) throw Error(fmt::format("{}: value '{}' is out of range", where, s));
  }
  if (i < s.size() && s[i] == '.')
    for (++i; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i, ++digits, any = true) {
      if (digits == 6) throw Error(fmt::format("{}: value '{}' has more than 6 decimals", where, s));
      frac = frac * 10 + (s[i] - '0');
    }
  if (!any || i != s.size()) throw Error(fmt::format("{}: '{}' is not a decimal number", where, s));
  for (; digits < 6; ++digits) frac *= 10;
  const std::int64_t v = whole * 1000000 + frac;
  return neg ? -v : v;
}

struct RunMeta {
  std::int64_t replications = 0;
  std::uint64_t bootstrap_seed = 7;
  /// What decides a cell's value besides its policies (docs/METRICS.md "Meta-game", "Cells from several runs"), as
  /// (name, JSON text) in a fixed order; "" for a field the file lacks.
  std::vector<std::pair<std::string, std::string>> provenance;
  /// The sweep points' conditions (group grid) by label: their BLUE and RED specs and settings.
  std::map<std::string, Condition> points;
};

RunMeta read_run_meta(const std::string& dir) {
  const std::string path = (fs::path(dir) / "run_metadata.json").string();
  json j;
  if (const std::string e = untrusted::parse_json_bounded(io::read_text_file(path, io::kMaxDocumentBytes), j); !e.empty())
    throw Error(fmt::format("{}: {}", path, e));
  if (!j.is_object()) throw Error(fmt::format("{}: not a JSON object", path));
  RunMeta m;
  const auto sim = j.find("simulator");
  if (sim == j.end() || !sim->contains("replications") || !(*sim)["replications"].is_number_integer() ||
      (*sim)["replications"].get<std::int64_t>() < 1)
    throw Error(fmt::format("{}: simulator.replications is missing or not a positive integer", path));
  m.replications = (*sim)["replications"].get<std::int64_t>();
  if (m.replications > 100000)  // the config's own bound; a larger R would overflow the matrix's denominator
    throw Error(fmt::format("{}: simulator.replications is {}, above the largest a run has (100000)", path, m.replications));
  if (const auto b = j.find("bootstrap"); b != j.end() && b->contains("seed") && (*b)["seed"].is_number_unsigned())
    m.bootstrap_seed = (*b)["seed"].get<std::uint64_t>();
  auto text = [&](const json* v) { return v == nullptr ? std::string() : v->dump(); };
  auto member = [&](const char* k) -> const json* {
    const auto it = j.find(k);
    return it == j.end() ? nullptr : &*it;
  };
  const json* key = member("run_key");
  const json* tpl = key != nullptr && key->is_object() && key->contains("templates_sha256") ? &(*key)["templates_sha256"] : nullptr;
  if (const json* conds = member("conditions"); conds != nullptr && conds->is_array()) {
    std::size_t n = 0;
    for (const auto& c : *conds) {
      if (++n > 100000) throw Error(fmt::format("{}: conditions: more than 100000", path));
      if (!c.is_object() || untrusted::string_member(c, "group") != "grid") continue;
      Condition cond{untrusted::string_member(c, "label"), untrusted::string_member(c, "blue"),
                     untrusted::string_member(c, "red"), "grid", {}};
      if (const auto st = c.find("settings"); st != c.end() && st->is_object())
        for (const auto& [k, v] : st->items()) {
          if (!v.is_number() || cond.settings.size() >= 64)
            throw Error(fmt::format("{}: conditions: the settings of '{}' are not at most 64 numbers", path,
                                    untrusted::excerpt(cond.label, 80)));
          cond.settings.push_back({k, v.get<double>()});
        }
      m.points.emplace(cond.label, std::move(cond));
    }
  }
  m.provenance = {{"seed", text(member("seed"))},
                  {"simulator", text(member("simulator"))},
                  {"quality_weights", text(member("quality_weights"))},
                  {"framing_mode", text(member("framing_mode"))},
                  {"run_key.templates_sha256", text(tpl)}};
  return m;
}

/// A sweep point as a player (docs/METRICS.md "Meta-game"): when its settings reach its RED policy alone, RED is
/// "<spec> [<settings but k>]" (a k point is its spec, greedy@4, itself); when they reach its BLUE policy alone,
/// BLUE is "<spec> [<settings>]". Renames `blue` or `red` and returns the player; nullopt for a point that changes
/// the wargame or both sides. Throws Error naming `path` for a setting no sweep accepts.
std::optional<std::string> point_player(const Condition& c, std::string& blue, std::string& red, const std::string& path) {
  SettingReach reach;
  std::vector<Setting> named;
  for (const Setting& st : c.settings) {
    SettingReach r;
    try {
      r = setting_reach(st.path, c, path);
    } catch (const Error& e) {
      throw Error(fmt::format("{} (in the conditions' settings of sweep point '{}')", e.what(),
                              untrusted::excerpt(c.label, 80)));
    }
    reach.red = reach.red || r.red;
    reach.blue = reach.blue || r.blue;
    reach.sim = reach.sim || r.sim;
    if (st.path != "k") named.push_back(st);
  }
  if (reach.sim || reach.red == reach.blue) return std::nullopt;
  std::string& side = reach.red ? red : blue;
  if (!named.empty()) side += " [" + settings_text(named) + "]";
  return side;
}

using CellKey = std::tuple<std::size_t, std::size_t, std::size_t>;  // (scenario, BLUE, RED)

/// Leaves out the sweep points' players that do not meet every opponent (a RED point of one BLUE policy's condition
/// in a run with several BLUE policies) or whose cells equal a listed policy's in every scenario (the point at the
/// config's own value), and renumbers the rest in order.
void drop_point_players(MetaGameData& d, std::map<CellKey, std::int64_t>& cell, std::map<CellKey, bool>& failed,
                        const std::set<std::size_t>& point_blue, const std::set<std::size_t>& listed_blue,
                        const std::set<std::size_t>& point_red, const std::set<std::size_t>& listed_red) {
  const std::size_t nb = d.blue.size(), nr = d.red.size();
  std::set<std::pair<std::size_t, std::size_t>> seen;
  std::set<std::size_t> scen;
  for (const auto& [k, v] : cell) seen.emplace(std::get<1>(k), std::get<2>(k)), scen.insert(std::get<0>(k));
  for (const auto& [k, v] : failed) seen.emplace(std::get<1>(k), std::get<2>(k)), scen.insert(std::get<0>(k));
  std::vector<bool> keep_b(nb, true), keep_r(nr, true);
  auto value = [&](std::size_t s, std::size_t b, std::size_t r) -> std::optional<std::int64_t> {
    const auto it = cell.find({s, b, r});
    return it == cell.end() ? std::nullopt : std::optional(it->second);
  };
  auto point_only = [](const std::set<std::size_t>& point, const std::set<std::size_t>& listed, std::size_t i) {
    return point.count(i) && !listed.count(i);
  };
  for (std::size_t b = 0; b < nb; ++b) {
    if (!point_only(point_blue, listed_blue, b)) continue;
    for (std::size_t r = 0; r < nr && keep_b[b]; ++r) keep_b[b] = seen.count({b, r}) > 0;
    for (std::size_t o = 0; o < nb && keep_b[b]; ++o) {
      if (point_only(point_blue, listed_blue, o)) continue;
      bool same = true;
      for (const std::size_t s : scen)
        for (std::size_t r = 0; r < nr && same; ++r) same = value(s, b, r) == value(s, o, r);
      keep_b[b] = !same;
    }
  }
  for (std::size_t r = 0; r < nr; ++r) {
    if (!point_only(point_red, listed_red, r)) continue;
    for (std::size_t b = 0; b < nb && keep_r[r]; ++b) keep_r[r] = !keep_b[b] || seen.count({b, r}) > 0;
    for (std::size_t o = 0; o < nr && keep_r[r]; ++o) {
      if (point_only(point_red, listed_red, o)) continue;
      bool same = true;
      for (const std::size_t s : scen)
        for (std::size_t b = 0; b < nb && same; ++b) same = !keep_b[b] || value(s, b, r) == value(s, b, o);
      keep_r[r] = !same;
    }
  }
  std::vector<std::size_t> nbi(nb), nri(nr);
  std::vector<std::string> blue, red;
  for (std::size_t b = 0; b < nb; ++b)
    if (keep_b[b]) nbi[b] = blue.size(), blue.push_back(d.blue[b]);
  for (std::size_t r = 0; r < nr; ++r)
    if (keep_r[r]) nri[r] = red.size(), red.push_back(d.red[r]);
  if (blue.size() == nb && red.size() == nr) return;
  auto remap = [&](auto& m) {
    std::remove_reference_t<decltype(m)> out;
    for (const auto& [k, v] : m)
      if (keep_b[std::get<1>(k)] && keep_r[std::get<2>(k)])
        out.emplace(CellKey{std::get<0>(k), nbi[std::get<1>(k)], nri[std::get<2>(k)]}, v);
    m = std::move(out);
  };
  remap(cell);
  remap(failed);
  d.blue = std::move(blue);
  d.red = std::move(red);
}

/// Each scenario's row of a run's scenarios.csv (its template, seed, terrain and framing), joined, by id; empty when
/// the run has no scenarios.csv (a single run needs none).
std::map<std::string, std::string> scenario_rows(const std::string& dir) {
  std::map<std::string, std::string> out;
  const fs::path path = fs::path(dir) / "scenarios.csv";
  if (!fs::is_regular_file(path)) return out;
  const io::CsvTable t = io::CsvTable::read(path.string());
  const std::size_t id = t.col("scenario_id");
  for (const auto& row : t.rows()) {
    std::string joined;
    for (const auto& c : row) joined += c + '\x1f';
    out.emplace(row[id], std::move(joined));
  }
  return out;
}

std::size_t lo_index(std::size_t b) { return std::min(static_cast<std::size_t>(std::floor(0.025 * static_cast<double>(b))), b - 1); }
std::size_t hi_index(std::size_t b) {
  const auto h = static_cast<std::size_t>(std::ceil(0.975 * static_cast<double>(b)));
  return h == 0 ? 0 : std::min(h - 1, b - 1);
}

/// Percentile interval of the resampled statistics, as statistics.cpp computes it.
std::pair<double, double> percentile(std::vector<double> v) {
  if (v.empty()) return {NAN, NAN};
  std::sort(v.begin(), v.end());
  return {v[lo_index(v.size())], v[hi_index(v.size())]};
}

std::string num(double v) { return std::isnan(v) ? "" : fmt::format("{:.6f}", v); }
std::string pct(double v) { return fmt::format("{:.3f}", v); }

std::string tex_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '_' || c == '&' || c == '%' || c == '#') o += '\\';
    o += c;
  }
  return o;
}

}  // namespace

IntMatrix MetaGameData::matrix(const std::vector<std::size_t>& idx) const {
  IntMatrix a;
  a.rows = blue.size();
  a.cols = red.size();
  a.num.assign(a.rows * a.cols, 0);
  const std::size_t cells_per = a.rows * a.cols;
  auto add = [&](std::size_t s) {
    for (std::size_t c = 0; c < cells_per; ++c) a.num[c] += cells[s * cells_per + c];
  };
  if (idx.empty())
    for (std::size_t s = 0; s < scenarios.size(); ++s) add(s);
  else
    for (std::size_t s : idx) add(s);
  const std::size_t n = idx.empty() ? scenarios.size() : idx.size();
  a.den = unit * static_cast<std::int64_t>(n);
  return a;
}

namespace {
/// What read_metagame_data gathers from the runs' rows before the matrix is built.
struct MetaGameCells {
  std::vector<std::string> scen_order;
  std::map<std::string, std::size_t> blue_ix, red_ix, scen_ix;
  /// (scenario, blue, red) -> payoff in units; the first ok row of a cell wins.
  std::map<CellKey, std::int64_t> cell;
  std::map<CellKey, bool> failed;
  /// Players seen only in sweep points' rows (a player a listed condition also names is a listed one).
  std::set<std::size_t> point_blue, listed_blue, point_red, listed_red;
  std::int64_t unit = 0;
  /// Each scenario's row as the first run that played it wrote it: id -> (row, run).
  std::map<std::string, std::pair<std::string, std::size_t>> scenario_seen;
};
}  // namespace

/// Cells pooled from several runs must have been played under the same settings: run r's provenance against the
/// first run's.
static void check_pooled_provenance(const std::vector<std::string>& run_dirs, std::size_t r, const RunMeta& meta,
                                    const RunMeta& first) {
  const std::string mpath = (fs::path(run_dirs[r]) / "run_metadata.json").string();
  for (std::size_t f = 0; f < meta.provenance.size(); ++f) {
    const auto& [name, value] = meta.provenance[f];
    if (value.empty() || value != first.provenance[f].second)
      throw Error(fmt::format("{}: {} is {}, while the first run {} has {}; cells of runs played under other "
                              "settings are not one game, so they are not pooled",
                              mpath, name, value.empty() ? std::string("missing") : untrusted::excerpt(value, 120),
                              run_dirs.front(),
                              first.provenance[f].second.empty() ? std::string("none")
                                                                 : untrusted::excerpt(first.provenance[f].second, 120)));
  }
}

/// A pooled cell's scenario must be the one the other runs played under its id (row i of run r's table at `path`).
static void check_pooled_scenario(MetaGameCells& c, const std::map<std::string, std::string>& scen_rows,
                                  const std::vector<std::string>& row, std::size_t cs, std::size_t cb, std::size_t cr,
                                  const std::string& path, std::size_t i, std::size_t r,
                                  const std::vector<std::string>& run_dirs) {
  const auto it = scen_rows.find(row[cs]);
  if (it == scen_rows.end())
    throw Error(fmt::format("{}: line {}: scenario {} (cell {} vs {}) is not in the run's scenarios.csv", path, i + 2,
                            untrusted::excerpt(row[cs], 60), untrusted::excerpt(row[cb], 80),
                            untrusted::excerpt(row[cr], 80)));
  const auto [seen, added] = c.scenario_seen.emplace(row[cs], std::pair{it->second, r});
  if (!added && seen->second.first != it->second)
    throw Error(fmt::format("{}: line {}: the cell {} vs {} is on scenario {}, which {} generated otherwise "
                            "(another template, seed, terrain or framing); cells of different scenarios are not "
                            "pooled",
                            path, i + 2, untrusted::excerpt(row[cb], 80), untrusted::excerpt(row[cr], 80),
                            untrusted::excerpt(row[cs], 60), run_dirs[seen->second.second]));
}

/// Row i's payoff in units of 1/u (a win rate, exactly a whole number of wins) or of millionths (an advantage).
static std::int64_t cell_units(const io::CsvTable& t, std::size_t i, const std::string& column, Payoff payoff,
                               std::int64_t u, const std::string& path) {
  const std::string& text = t.rows()[i][t.col(column)];
  const std::string where = fmt::format("{}: line {}, column {}", path, i + 2, column);
  if (payoff != Payoff::win_rate) return micro_units(text, where);
  const double x = t.real(i, column);
  const std::int64_t v = std::llround(x * static_cast<double>(u));
  if (!(x >= 0 && x <= 1) || io::fmt_real(static_cast<double>(v) / static_cast<double>(u)) != text)
    throw Error(fmt::format("{}: win rate '{}' is not a whole number of wins out of {} replications", where, text, u));
  return v;
}

/// The cells of run r's per_scenario.csv (its samples' means when it has several), in units of u.
static void read_run_cells(MetaGameCells& c, const std::vector<std::string>& run_dirs, std::size_t r,
                           const RunMeta& meta, const std::map<std::string, std::string>& scen_rows, Payoff payoff,
                           std::int64_t u, MetaGameData& d) {
  const bool pooled = run_dirs.size() > 1;
  const std::string path = (fs::path(run_dirs[r]) / "per_scenario.csv").string();
  // A run of several samples is read as its samples' means within each scenario (sample_means).
  io::CsvTable t = io::CsvTable::read(path);
  schema::check_ranges(t, schema::per_scenario_ranges());
  if (t.has_col("sample")) t = sample_means(t);
  const std::string column = payoff == Payoff::win_rate ? "blue_win_rate" : "advantage";
  const std::size_t cl = t.has_col("condition") ? t.col("condition") : std::string::npos, cs = t.col("scenario_id"),
                    cg = t.col("condition_group"), cb = t.col("blue_policy"), cr = t.col("red_policy"),
                    cst = t.col("status");
  auto index_of = [](std::map<std::string, std::size_t>& m, std::vector<std::string>& order, const std::string& k) {
    const auto [it, added] = m.emplace(k, order.size());
    if (added) order.push_back(k);
    return it->second;
  };
  for (std::size_t i = 0; i < t.size(); ++i) {
    const auto& row = t.rows()[i];
    // Table 4's pairings belong to the budget sweep, and an attribution combination replays a condition with
    // parts switched off. A sweep point whose settings reach one side only is a policy of its own.
    if (row[cg] == "sweep" || row[cg] == "attribution") continue;
    std::string blue_name = row[cb], red_name = row[cr];
    if (row[cg] == "grid") {
      if (cl == std::string::npos) throw Error(fmt::format("{}: line {}: a sweep point's row, and no condition column", path, i + 2));
      const auto pt = meta.points.find(row[cl]);
      if (pt == meta.points.end())
        throw Error(fmt::format("{}: line {}: sweep point '{}' is not among the conditions of run_metadata.json", path,
                                i + 2, untrusted::excerpt(row[cl], 80)));
      const std::optional<std::string> player =
          point_player(pt->second, blue_name, red_name, (fs::path(run_dirs[r]) / "run_metadata.json").string());
      if (!player) continue;  // the point changes the wargame, or both sides: no player of its own
    }
    if (pooled) check_pooled_scenario(c, scen_rows, row, cs, cb, cr, path, i, r, run_dirs);
    const std::size_t s = index_of(c.scen_ix, c.scen_order, row[cs]);
    const std::size_t b = index_of(c.blue_ix, d.blue, blue_name);
    const std::size_t rd = index_of(c.red_ix, d.red, red_name);
    (row[cg] == "grid" ? c.point_blue : c.listed_blue).insert(b);
    (row[cg] == "grid" ? c.point_red : c.listed_red).insert(rd);
    const auto key = std::make_tuple(s, b, rd);
    if (c.cell.count(key)) continue;
    if (row[cst] != "ok") {
      c.failed[key] = true;
      continue;
    }
    c.cell[key] = cell_units(t, i, column, payoff, u, path);
    c.failed.erase(key);
  }
}

/// Every pairing must have been run (an ok or a failed row).
static void check_every_pairing(const MetaGameData& d, const MetaGameCells& c, const std::string& first_dir) {
  const std::size_t nb = d.blue.size(), nr = d.red.size();
  std::set<std::pair<std::size_t, std::size_t>> seen;
  for (const auto& [k, v] : c.cell) seen.emplace(std::get<1>(k), std::get<2>(k));
  for (const auto& [k, v] : c.failed) seen.emplace(std::get<1>(k), std::get<2>(k));
  for (std::size_t b = 0; b < nb; ++b)
    for (std::size_t r = 0; r < nr; ++r)
      if (!seen.count({b, r}))
        throw Error(fmt::format("{}: per_scenario.csv has no row of BLUE '{}' against RED '{}'; the meta-game needs "
                                "every BLUE policy against every RED policy (a `matrix:` run)",
                                first_dir, d.blue[b], d.red[r]));
}

/// The scenarios with an ok cell for every pairing, their cells in d.cells; a scenario with a failed cell is dropped
/// for all.
static void keep_complete_scenarios(MetaGameData& d, const MetaGameCells& c) {
  const std::size_t nb = d.blue.size(), nr = d.red.size();
  for (std::size_t s = 0; s < c.scen_order.size(); ++s) {
    std::vector<std::int64_t> row(nb * nr);
    bool complete = true;
    for (std::size_t b = 0; b < nb && complete; ++b)
      for (std::size_t r = 0; r < nr && complete; ++r) {
        const auto it = c.cell.find({s, b, r});
        if (it == c.cell.end())
          complete = false;
        else
          row[b * nr + r] = it->second;
      }
    if (!complete) {
      ++d.dropped_scenarios;
      continue;
    }
    d.scenarios.push_back(c.scen_order[s]);
    d.cells.insert(d.cells.end(), row.begin(), row.end());
  }
}

MetaGameData read_metagame_data(const std::vector<std::string>& run_dirs, Payoff payoff) {
  if (run_dirs.empty()) throw Error("metagame: no run directory given");
  MetaGameData d;
  d.payoff = payoff;
  MetaGameCells c;
  // Cells pooled from several runs must have been played on the same scenarios under the same settings: the first
  // run's provenance, and each scenario's row as the first run that played it wrote it.
  const bool pooled = run_dirs.size() > 1;
  RunMeta first;
  for (std::size_t r = 0; r < run_dirs.size(); ++r) {
    const RunMeta meta = read_run_meta(run_dirs[r]);
    if (r == 0) {
      d.bootstrap_seed = meta.bootstrap_seed;
      first = meta;
    }
    std::map<std::string, std::string> scen_rows;
    if (pooled) {
      check_pooled_provenance(run_dirs, r, meta, first);
      scen_rows = scenario_rows(run_dirs[r]);
      if (scen_rows.empty())
        throw Error(fmt::format("{}: missing, so the cells of {} cannot be checked against the other runs' scenarios",
                                (fs::path(run_dirs[r]) / "scenarios.csv").string(), run_dirs[r]));
    }
    const std::int64_t u = payoff == Payoff::win_rate ? meta.replications : 1000000;
    if (c.unit != 0 && u != c.unit)
      throw Error(fmt::format("{}: simulator.replications is {}, while the first run has {}; win rates of different "
                              "replication counts do not form one matrix",
                              (fs::path(run_dirs[r]) / "run_metadata.json").string(), u, c.unit));
    c.unit = u;
    read_run_cells(c, run_dirs, r, meta, scen_rows, payoff, u, d);
  }
  d.unit = c.unit;
  drop_point_players(d, c.cell, c.failed, c.point_blue, c.listed_blue, c.point_red, c.listed_red);
  if (d.blue.empty() || d.red.empty()) throw Error(fmt::format("{}: no rows of BLUE against RED", run_dirs.front()));
  check_every_pairing(d, c, run_dirs.front());
  keep_complete_scenarios(d, c);
  if (d.scenarios.empty())
    throw Error(fmt::format("{}: no scenario has an ok row for every BLUE x RED pairing", run_dirs.front()));
  return d;
}

namespace {

/// The bootstrap over scenarios: B resamples of the scenarios, each game solved again (value, exploitabilities,
/// supports), and the equilibrium mixtures' exploitability in each resampled game.
struct ScenarioBootstrap {
  std::vector<double> value;
  std::vector<std::vector<double>> blue, red;  ///< per pure policy, its exploitability
  std::vector<double> blue_mix, red_mix;
  std::vector<std::size_t> blue_support, red_support;  ///< resamples with the policy in the equilibrium's support
  std::size_t used() const { return value.size(); }
  double freq(std::size_t c) const { return used() ? static_cast<double>(c) / static_cast<double>(used()) : NAN; }
};

ScenarioBootstrap bootstrap_scenarios(const MetaGameData& d, const MetaGameOptions& opt, const GameSolution& g,
                                      const std::string& payoff_name) {
  const std::size_t nb = d.blue.size(), nr = d.red.size(), n = d.scenarios.size();
  const auto B = static_cast<std::size_t>(std::max(0, opt.resamples));
  ScenarioBootstrap bs;
  bs.blue.resize(nb);
  bs.red.resize(nr);
  bs.blue_support.assign(nb, 0);
  bs.red_support.assign(nr, 0);
  std::vector<double> x(nb), y(nr);
  for (std::size_t i = 0; i < nb; ++i) x[i] = g.blue[i].value;
  for (std::size_t j = 0; j < nr; ++j) y[j] = g.red[j].value;
  if (n > 1) {
    Rng rng = Rng::keyed(opt.seed, "bootstrap", "metagame/" + payoff_name);
    std::vector<std::size_t> idx(n);
    for (std::size_t b = 0; b < B; ++b) {
      for (auto& s : idx) s = rng.pick_index(n);
      const IntMatrix ab = d.matrix(idx);
      const GameSolution gb = solve_game(ab, false);
      bs.value.push_back(gb.value.value);
      for (std::size_t i = 0; i < nb; ++i) {
        bs.blue[i].push_back(gb.blue_exploit[i].value);
        if (gb.blue[i].value > 0) ++bs.blue_support[i];
      }
      for (std::size_t j = 0; j < nr; ++j) {
        bs.red[j].push_back(gb.red_exploit[j].value);
        if (gb.red[j].value > 0) ++bs.red_support[j];
      }
      const MixExploit me = mixture_exploitability(ab, gb.value.value, x, y);
      bs.blue_mix.push_back(me.blue);
      bs.red_mix.push_back(me.red);
    }
  }
  return bs;
}

/// payoff_matrix.csv: BLUE rows, RED columns.
void write_payoff_matrix(const MetaGameData& d, const IntMatrix& a, const std::string& path) {
  std::vector<std::string> header{"blue"};
  header.insert(header.end(), d.red.begin(), d.red.end());
  io::CsvTable t(header);
  for (std::size_t i = 0; i < d.blue.size(); ++i) {
    std::vector<std::string> row{d.blue[i]};
    for (std::size_t j = 0; j < d.red.size(); ++j) row.push_back(fmt::format("{:.9f}", a.value(i, j)));
    t.add(std::move(row));
  }
  t.write(path);
}

/// One row of exploitability.csv (and of its Markdown and LaTeX table).
struct ExRow {
  std::string side, policy;
  Fraction e;
  std::pair<double, double> ci;
  std::string best_reply;
  double support;
};

/// Each pure policy's and each equilibrium mixture's regret against its best reply, BLUE's then RED's.
std::vector<ExRow> exploitability_rows(const MetaGameData& d, const GameSolution& g, const ScenarioBootstrap& bs) {
  std::vector<ExRow> ex;
  for (std::size_t i = 0; i < d.blue.size(); ++i)
    ex.push_back({"blue", d.blue[i], g.blue_exploit[i], percentile(bs.blue[i]), d.red[g.blue_best_reply[i]],
                  bs.freq(bs.blue_support[i])});
  ex.push_back({"blue", "equilibrium", g.blue_mix_exploit, percentile(bs.blue_mix), d.red[g.blue_mix_best_reply], NAN});
  for (std::size_t j = 0; j < d.red.size(); ++j)
    ex.push_back({"red", d.red[j], g.red_exploit[j], percentile(bs.red[j]), d.blue[g.red_best_reply[j]],
                  bs.freq(bs.red_support[j])});
  ex.push_back({"red", "equilibrium", g.red_mix_exploit, percentile(bs.red_mix), d.blue[g.red_mix_best_reply], NAN});
  return ex;
}

void write_exploitability(const std::vector<ExRow>& ex, const std::string& path) {
  io::CsvTable t({"side", "policy", "exploitability", "exploitability_exact", "ci_lo", "ci_hi", "best_reply",
                  "support_frequency"});
  for (const auto& r : ex)
    t.add({r.side, r.policy, num(r.e.value), r.e.str(), num(r.ci.first), num(r.ci.second), r.best_reply,
           num(r.support)});
  t.write(path);
}

/// equilibrium.json: the exact matrix, the value with its interval and both equilibrium mixtures.
void write_equilibrium(const MetaGameData& d, const MetaGameOptions& opt, const IntMatrix& a, const GameSolution& g,
                       const ScenarioBootstrap& bs, const std::pair<double, double>& value_ci,
                       const std::string& payoff_name, const std::string& path) {
  const std::size_t used = bs.used();
  json j;
  j["payoff"] = payoff_name;
  j["solver"] = "GLPK glp_exact (rational simplex); exact basic solution in GMP rationals";
  j["scenarios"] = d.scenarios.size();
  j["dropped_scenarios"] = d.dropped_scenarios;
  j["unit"] = d.unit;
  j["denominator"] = a.den;
  j["blue"] = d.blue;
  j["red"] = d.red;
  json m = json::array();
  for (std::size_t i = 0; i < d.blue.size(); ++i) {
    json row = json::array();
    for (std::size_t jx = 0; jx < d.red.size(); ++jx) {
      row.push_back(make_fraction(a.at(i, jx), a.den).str());
    }
    m.push_back(row);
  }
  j["matrix"] = m;
  j["value"] = {{"exact", g.value.str()}, {"value", g.value.value}, {"ci_lo", value_ci.first},
                {"ci_hi", value_ci.second}};
  j["unique"] = g.unique;
  auto mix = [&](const std::vector<std::string>& names, const std::vector<Fraction>& p,
                 const std::vector<std::pair<Fraction, Fraction>>& range, const std::vector<std::size_t>& support) {
    json arr = json::array();
    for (std::size_t i = 0; i < names.size(); ++i)
      arr.push_back({{"policy", names[i]}, {"probability", p[i].str()}, {"value", p[i].value},
                     {"min", range[i].first.str()}, {"max", range[i].second.str()},
                     {"support_frequency", used ? json(bs.freq(support[i])) : json(nullptr)}});
    return arr;
  };
  j["blue_mixture"] = mix(d.blue, g.blue, g.blue_range, bs.blue_support);
  j["red_mixture"] = mix(d.red, g.red, g.red_range, bs.red_support);
  j["bootstrap"] = {{"resamples", used}, {"seed", opt.seed}, {"key", "metagame/" + payoff_name}};
  io::write_file_atomic(path, j.dump(2) + "\n");
}

using AlphaRanks = std::vector<std::pair<double, AlphaRank>>;

/// The two populations' payoffs alpha-Rank reads: BLUE's A, RED's 1 - A for win rates and -A for advantage.
std::pair<std::vector<double>, std::vector<double>> alpharank_payoffs(const IntMatrix& a, std::size_t nb,
                                                                      std::size_t nr, bool win) {
  std::vector<double> bp(nb * nr), rp(nb * nr);
  for (std::size_t i = 0; i < nb; ++i)
    for (std::size_t j = 0; j < nr; ++j) {
      bp[i * nr + j] = a.value(i, j);
      rp[i * nr + j] = win ? 1.0 - a.value(i, j) : -a.value(i, j);
    }
  return {bp, rp};
}

/// alpharank.csv and response_graph.csv (RED's payoff: 1 - A for win rates, -A for advantage); the alpha-Rank of
/// each alpha.
AlphaRanks write_alpharank_and_graph(const MetaGameData& d, const MetaGameOptions& opt, const IntMatrix& a, bool win,
                                     const std::string& alpharank_path, const std::string& graph_path) {
  const std::size_t nb = d.blue.size(), nr = d.red.size();
  const auto [bp, rp] = alpharank_payoffs(a, nb, nr, win);
  AlphaRanks ranks;
  {
    io::CsvTable t({"alpha", "m", "blue", "red", "pi", "closed_classes"});
    for (double alpha : opt.alphas) {
      // The dense solver up to kDenseAlphaRankMax profiles (the bytes every earlier run had), the sparse one above
      // (docs/METRICS.md "Sparse alpha-Rank"; the two agree to 1e-10, tests/metagame/alpharank_sparse_test.cpp), and
      // the matrix-free one where the explicit chain would pass kMatrixFreeAlphaRankEdges transitions.
      AlphaRank ar;
      if (nb * nr <= kDenseAlphaRankMax) {
        ar = alpharank_two_population(bp, rp, nb, nr, alpha, opt.m);
      } else if (nb * nr * (nb + nr - 2) > kMatrixFreeAlphaRankEdges &&
                 matrix_free_alpharank_applies(bp, rp, nb, nr, alpha, opt.m)) {
        SparseAlphaRank s = alpharank_two_population_matrix_free(bp, rp, nb, nr, alpha, opt.m);
        ar.pi = std::move(s.pi);
        ar.closed_classes = s.closed_classes;
      } else {
        SparseAlphaRank s = alpharank_two_population_sparse(bp, rp, nb, nr, alpha, opt.m);
        ar.pi = std::move(s.pi);
        ar.closed_classes = s.closed_classes;
      }
      for (std::size_t i = 0; i < nb; ++i)
        for (std::size_t j = 0; j < nr; ++j)
          t.add({std::isinf(alpha) ? "inf" : fmt::format("{:g}", alpha), std::to_string(opt.m), d.blue[i], d.red[j],
                 fmt::format("{:.8f}", ar.pi[i * nr + j]), std::to_string(ar.closed_classes)});
      ranks.emplace_back(alpha, std::move(ar));
    }
    t.write(alpharank_path);
  }
  io::CsvTable t({"from_blue", "from_red", "to_blue", "to_red", "mover", "gain", "best_reply"});
  for (const auto& e : response_graph(bp, rp, nb, nr))
    t.add({d.blue[e.from_blue], d.red[e.from_red], d.blue[e.to_blue], d.red[e.to_red], e.blue_moves ? "blue" : "red",
           num(e.gain), e.best ? "1" : "0"});
  t.write(graph_path);
  return ranks;
}

/// metagame.md and metagame.tex, written side by side.
struct Report {
  std::string md, tex;
};

/// The payoff matrix, BLUE rows and RED columns.
void add_payoff_tables(Report& rep, const MetaGameData& d, const IntMatrix& a, const std::string& payoff_name) {
  const std::size_t nb = d.blue.size(), nr = d.red.size();
  std::string& md = rep.md;
  std::string& tex = rep.tex;
  md = fmt::format("## Meta-game: {} (BLUE rows, RED columns; mean over {} scenarios{})\n\n", payoff_name,
                   d.scenarios.size(), d.dropped_scenarios ? fmt::format(", {} dropped", d.dropped_scenarios) : "");
  tex = "% advplan metagame: " + payoff_name + "\n\\begin{tabular}{l" + std::string(nr, 'r') + "}\n\\hline\nBLUE";
  md += "| BLUE \\ RED |";
  for (const auto& r : d.red) {
    md += " " + r + " |";
    tex += " & " + tex_escape(r);
  }
  md += "\n|---|";
  for (std::size_t j = 0; j < nr; ++j) md += "---:|";
  md += "\n";
  tex += " \\\\\n\\hline\n";
  for (std::size_t i = 0; i < nb; ++i) {
    md += "| " + d.blue[i] + " |";
    tex += tex_escape(d.blue[i]);
    for (std::size_t j = 0; j < nr; ++j) {
      md += fmt::format(" {:.4f} |", a.value(i, j));
      tex += " & " + fmt::format("{:.4f}", a.value(i, j));
    }
    md += "\n";
    tex += " \\\\\n";
  }
  tex += "\\hline\n\\end{tabular}\n\n";
}

/// The value and both equilibrium mixtures, with each probability's range and support frequency.
void add_mixture_tables(Report& rep, const MetaGameData& d, const GameSolution& g, const ScenarioBootstrap& bs,
                        const std::pair<double, double>& value_ci) {
  const std::size_t used = bs.used();
  std::string& md = rep.md;
  std::string& tex = rep.tex;
  md += fmt::format("\nValue {} = {:.6f} [{}, {}] (95% bootstrap, {} resamples); equilibrium {}.\n\n", g.value.str(),
                    g.value.value, num(value_ci.first), num(value_ci.second), used,
                    g.unique ? "unique" : "not unique");
  md += "| side | policy | equilibrium probability | range over equilibria | in support (bootstrap) |\n|---|---|---:|---:|---:|\n";
  tex += "\\begin{tabular}{llrrr}\n\\hline\nside & policy & probability & range & support \\\\\n\\hline\n";
  auto mixrows = [&](const std::string& side, const std::vector<std::string>& names, const std::vector<Fraction>& p,
                     const std::vector<std::pair<Fraction, Fraction>>& range, const std::vector<std::size_t>& sup) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      const std::string rg = fmt::format("[{:.4f}, {:.4f}]", range[i].first.value, range[i].second.value);
      md += fmt::format("| {} | {} | {:.4f} | {} | {} |\n", side, names[i], p[i].value, rg,
                        used ? pct(bs.freq(sup[i])) : "");
      tex += fmt::format("{} & {} & {:.4f} & {} & {} \\\\\n", side, tex_escape(names[i]), p[i].value, rg,
                         used ? pct(bs.freq(sup[i])) : "");
    }
  };
  mixrows("BLUE", d.blue, g.blue, g.blue_range, bs.blue_support);
  mixrows("RED", d.red, g.red, g.red_range, bs.red_support);
  tex += "\\hline\n\\end{tabular}\n\n";
}

/// The exploitability rows.
void add_exploitability_table(Report& rep, const std::vector<ExRow>& ex) {
  std::string& md = rep.md;
  std::string& tex = rep.tex;
  md += "\n| side | policy | exploitability | 95% interval | best reply |\n|---|---|---:|---:|---|\n";
  tex += "\\begin{tabular}{llrrl}\n\\hline\nside & policy & exploitability & 95\\% interval & best reply \\\\\n\\hline\n";
  for (const auto& r : ex) {
    const std::string ci = fmt::format("[{}, {}]", num(r.ci.first), num(r.ci.second));
    md += fmt::format("| {} | {} | {:.6f} | {} | {} |\n", r.side == "blue" ? "BLUE" : "RED", r.policy, r.e.value, ci,
                      r.best_reply);
    tex += fmt::format("{} & {} & {:.6f} & {} & {} \\\\\n", r.side == "blue" ? "BLUE" : "RED", tex_escape(r.policy),
                       r.e.value, ci, tex_escape(r.best_reply));
  }
  tex += "\\hline\n\\end{tabular}\n\n";
}

/// Per alpha: the profile with the most stationary mass, and each side's marginal's top policy.
void add_alpharank_table(Report& rep, const MetaGameData& d, const MetaGameOptions& opt, const AlphaRanks& ranks) {
  const std::size_t nb = d.blue.size(), nr = d.red.size();
  std::string& md = rep.md;
  std::string& tex = rep.tex;
  md += fmt::format("\nalpha-Rank (m = {}): the profile with the most stationary mass, and BLUE's and RED's marginals' "
                    "top policy.\n\n| alpha | top profile | pi | BLUE top (mass) | RED top (mass) | closed classes |\n"
                    "|---:|---|---:|---|---|---:|\n",
                    opt.m);
  tex += "\\begin{tabular}{rlrllr}\n\\hline\n$\\alpha$ & top profile & $\\pi$ & BLUE top & RED top & classes \\\\\n\\hline\n";
  for (const auto& [alpha, ar] : ranks) {
    std::vector<double> mb(nb, 0), mr(nr, 0);
    std::size_t top = 0;
    for (std::size_t k = 0; k < nb * nr; ++k) {
      mb[k / nr] += ar.pi[k];
      mr[k % nr] += ar.pi[k];
      if (ar.pi[k] > ar.pi[top]) top = k;
    }
    const auto tb = static_cast<std::size_t>(std::max_element(mb.begin(), mb.end()) - mb.begin());
    const auto tr = static_cast<std::size_t>(std::max_element(mr.begin(), mr.end()) - mr.begin());
    const std::string al = std::isinf(alpha) ? "inf" : fmt::format("{:g}", alpha);
    md += fmt::format("| {} | {} vs {} | {:.4f} | {} ({:.3f}) | {} ({:.3f}) | {} |\n", al, d.blue[top / nr],
                      d.red[top % nr], ar.pi[top], d.blue[tb], mb[tb], d.red[tr], mr[tr], ar.closed_classes);
    tex += fmt::format("{} & {} vs {} & {:.4f} & {} ({:.3f}) & {} ({:.3f}) & {} \\\\\n",
                       std::isinf(alpha) ? "$\\infty$" : al, tex_escape(d.blue[top / nr]), tex_escape(d.red[top % nr]),
                       ar.pi[top], tex_escape(d.blue[tb]), mb[tb], tex_escape(d.red[tr]), mr[tr], ar.closed_classes);
  }
  tex += "\\hline\n\\end{tabular}\n";
}

/// Each policy's Bradley-Terry strength with its interval, Elo, and Nash-averaged probability and rating.
void add_ratings_table(Report& rep, const MetaGameData& d, const RatingsResult& r) {
  const std::size_t nb = d.blue.size();
  const bool bt = r.bt.exists && r.bt.converged;
  rep.md += "\nRatings (docs/METRICS.md \"Ratings\", \"Nash averaging\")" +
            std::string(bt ? "" : "; Bradley-Terry: no maximum-likelihood estimate (a policy won or lost every game)") +
            ".\n\n| side | policy | Bradley-Terry theta [95%] | Elo | Nash probability | Nash rating |\n"
            "|---|---|---:|---:|---:|---:|\n";
  rep.tex += "\n\\begin{tabular}{llrrrr}\n\\hline\nside & policy & BT $\\theta$ & Elo & Nash $p$ & Nash rating \\\\\n"
             "\\hline\n";
  for (std::size_t p = 0; p < r.elo.size(); ++p) {
    const bool blue = p < nb;
    const std::size_t k = blue ? p : p - nb;
    const std::string name = blue ? d.blue[k] : d.red[k];
    const std::string theta = bt ? fmt::format("{:.4f} [{}, {}]", r.bt.theta[p], num(r.ci[p].first), num(r.ci[p].second)) : "";
    const double prob = blue ? r.nash.blue[k] : r.nash.red[k], rating = blue ? r.nash.blue_rating[k] : r.nash.red_rating[k];
    rep.md += fmt::format("| {} | {} | {} | {:.1f} | {:.4f} | {:.6f} |\n", blue ? "BLUE" : "RED", name, theta, r.elo[p],
                          prob, rating);
    rep.tex += fmt::format("{} & {} & {} & {:.1f} & {:.4f} & {:.6f} \\\\\n", blue ? "BLUE" : "RED", tex_escape(name),
                           theta, r.elo[p], prob, rating);
  }
  rep.tex += "\\hline\n\\end{tabular}\n";
}

}  // namespace

std::string write_metagame(const MetaGameData& d, const MetaGameOptions& opt, const std::string& out_dir) {
  const IntMatrix a = d.matrix();
  const GameSolution g = solve_game(a, true);
  const bool win = d.payoff == Payoff::win_rate;
  const std::string payoff_name = win ? "win_rate" : "advantage";
  const ScenarioBootstrap bs = bootstrap_scenarios(d, opt, g, payoff_name);
  const auto value_ci = percentile(bs.value);

  fs::create_directories(out_dir);
  auto out = [&](const std::string& f) { return (fs::path(out_dir) / f).string(); };
  write_payoff_matrix(d, a, out("payoff_matrix.csv"));
  const std::vector<ExRow> ex = exploitability_rows(d, g, bs);
  write_exploitability(ex, out("exploitability.csv"));
  write_equilibrium(d, opt, a, g, bs, value_ci, payoff_name, out("equilibrium.json"));
  const RatingsResult ratings = compute_ratings(d, opt, a, g);
  write_ratings(d, opt, a, ratings, out("ratings.csv"), out("ratings.json"));
  MetaGameOptions ranked = opt;
  if (opt.suggest_alpha) {  // --alpha suggest: the sweep, then the ranking at the suggested alpha and at inf
    const std::size_t nb = d.blue.size(), nr = d.red.size();
    const auto [bp, rp] = alpharank_payoffs(a, nb, nr, win);
    const AlphaSuggestion s = suggest_alpha(bp, rp, nb, nr, opt.m);
    io::CsvTable t({"alpha", "blue_ranking", "red_ranking", "suggested"});
    for (const auto& row : s.sweep) {
      std::string b, r;
      for (std::size_t i : row.blue_order) b += (b.empty() ? "" : " > ") + d.blue[i];
      for (std::size_t j : row.red_order) r += (r.empty() ? "" : " > ") + d.red[j];
      t.add({fmt::format("{:g}", row.alpha), b, r, row.alpha == s.alpha ? "1" : "0"});
    }
    t.write(out("alpha_sweep.csv"));
    ranked.alphas = {s.alpha, kInfiniteAlpha};
  }
  const AlphaRanks ranks =
      write_alpharank_and_graph(d, ranked, a, win, out("alpharank.csv"), out("response_graph.csv"));

  Report rep;
  add_payoff_tables(rep, d, a, payoff_name);
  add_mixture_tables(rep, d, g, bs, value_ci);
  add_exploitability_table(rep, ex);
  add_alpharank_table(rep, d, ranked, ranks);
  add_ratings_table(rep, d, ratings);
  io::write_file_atomic(out("metagame.md"), rep.md);
  io::write_file_atomic(out("metagame.tex"), rep.tex);
  return rep.md;
}

}  // namespace advplan::metagame
