#include "advplan/evaluation/design.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/io/run_store.hpp"
#include "advplan/run/run_reader.hpp"
#include "advplan/run/trace_schema.hpp"

namespace advplan {

namespace {

using io::CsvTable;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t kMaxConditions = 64, kMaxPairs = 64, kMaxSamples = 1024;
constexpr std::uintmax_t kMaxTraceBytes = std::uintmax_t{1} << 30;
const std::array<std::string, 2> kMetrics = {"advantage", "blue_win_rate"};

/// The pilot's rows: per (scenario, sample) cell, each condition's two metrics (NaN when the row failed or is
/// missing); conditions, templates and scenarios numbered in order of first appearance.
struct PilotRows {
  std::vector<std::string> conditions, blue, red;
  std::vector<std::size_t> cell_template, cell_scenario;
  std::vector<std::vector<std::array<double, 2>>> values;
  std::size_t scenarios = 0, templates = 0, samples = 0;
};

std::size_t number_of(std::map<std::string, std::size_t>& ids, const std::string& key) {
  return ids.emplace(key, ids.size()).first->second;
}

std::size_t condition_of(PilotRows& p, const CsvTable& t, std::size_t r) {
  const std::string& c = t.at(r, "condition");
  for (std::size_t i = 0; i < p.conditions.size(); ++i)
    if (p.conditions[i] == c) return i;
  if (p.conditions.size() == kMaxConditions)
    throw CsvError(fmt::format("{}: more than {} conditions; advplan design compares at most that many", t.source(),
                               kMaxConditions));
  p.conditions.push_back(c);
  p.blue.push_back(t.at(r, "blue_policy"));
  p.red.push_back(t.at(r, "red_policy"));
  for (auto& v : p.values) v.push_back({kNaN, kNaN});
  return p.conditions.size() - 1;
}

PilotRows pilot_rows(const CsvTable& t) {
  PilotRows p;
  std::map<std::string, std::size_t> tmpl, scen, cells;
  for (std::size_t r = 0; r < t.size(); ++r) {
    const double sample = t.real(r, "sample");
    if (!(sample >= 0 && sample < static_cast<double>(kMaxSamples)))
      throw CsvError(fmt::format("{}: line {}: column 'sample' is outside 0..{}", t.source(), r + 2, kMaxSamples - 1));
    p.samples = std::max(p.samples, static_cast<std::size_t>(sample) + 1);
    const std::size_t ti = number_of(tmpl, t.at(r, "template"));
    const std::size_t si = number_of(scen, t.at(r, "scenario_id"));
    const std::size_t cell = number_of(cells, t.at(r, "scenario_id") + '\n' + std::to_string(std::size_t(sample)));
    const std::size_t ci = condition_of(p, t, r);
    if (cell == p.values.size()) {
      p.values.emplace_back(p.conditions.size(), std::array<double, 2>{kNaN, kNaN});
      p.cell_template.push_back(ti);
      p.cell_scenario.push_back(si);
    }
    if (t.at(r, "status") == "ok") p.values[cell][ci] = {t.real(r, "advantage"), t.real(r, "blue_win_rate")};
  }
  p.scenarios = scen.size();
  p.templates = tmpl.size();
  return p;
}

}  // namespace

namespace {

/// A number at `path` (dot-separated) of run_metadata.json; std::nullopt when absent; an error naming the field when
/// present but not a finite number in [lo, hi].
std::optional<double> meta_number(const nlohmann::json& j, const std::string& file, const std::string& path, double lo,
                                  double hi) {
  const nlohmann::json* at = &j;
  for (std::size_t b = 0; b <= path.size();) {
    const std::size_t e = std::min(path.find('.', b), path.size());
    const std::string key = path.substr(b, e - b);
    if (!at->is_object() || !at->contains(key)) return std::nullopt;
    at = &(*at)[key];
    b = e + 1;
  }
  if (at->is_null()) return std::nullopt;
  if (!at->is_number() || !(at->get<double>() >= lo && at->get<double>() <= hi))
    throw CsvError(fmt::format("{}: field {} is {}, not a number in [{}, {}]", file, path,
                               untrusted::excerpt(at->dump(), 60), lo, hi));
  return at->get<double>();
}

double required_number(const nlohmann::json& j, const std::string& file, const std::string& path, double lo,
                       double hi) {
  const auto v = meta_number(j, file, path, lo, hi);
  if (!v) throw CsvError(fmt::format("{}: field {} is missing", file, path));
  return *v;
}

/// The sample's cost: --sample-cost, else the pilot's priced model calls per (scenario, sample), else 0 when the
/// pilot called no model.
void sample_cost(const nlohmann::json& m, const std::string& file, const DesignSettings& s, PilotFacts& f) {
  const bool called = m.contains("llm_usage");
  const auto cost = meta_number(m, file, "llm_cost_usd", 0, 1e12);
  f.llm_cost_usd = cost.value_or(0.0);
  f.llm_priced = !called || cost.has_value();
  if (s.sample_cost) {
    f.costs.sample = *s.sample_cost;
    f.sample_cost_source = "--sample-cost";
  } else if (!called) {
    f.costs.sample = 0;
    f.sample_cost_source = "no model calls in the pilot: token cost 0";
  } else if (!cost) {
    throw CsvError(fmt::format("{}: field llm_cost_usd is null (a model without a price in llm.prices): give "
                               "--sample-cost",
                               file));
  } else {
    f.costs.sample = *cost / static_cast<double>(f.scenarios * f.samples);
    f.sample_cost_source = "the pilot's llm_cost_usd per (scenario, sample)";
  }
}

PilotFacts pilot_facts(const std::string& dir, const PilotRows& p, const DesignSettings& s) {
  const std::string file = io::run_metadata_path(dir);
  const nlohmann::json m = io::read_run_metadata(dir);
  PilotFacts f;
  f.scenarios = p.scenarios;
  f.templates = p.templates;
  f.samples = p.samples;
  f.conditions = p.conditions.size();
  f.replications = static_cast<std::size_t>(required_number(m, file, "simulator.replications", 1, 1e7));
  if (f.replications < 2)
    throw CsvError(fmt::format("{}: field simulator.replications is 1: the replication component needs a pilot with "
                               "at least 2 replications",
                               file));
  f.resumed = meta_number(m, file, "resumed_from", 0, 1e12).value_or(0) > 0;
  sample_cost(m, file, s, f);
  if (s.replication_seconds) {
    f.replication_seconds = *s.replication_seconds;
    f.replication_seconds_source = "--replication-seconds";
  } else {
    const double wall = required_number(m, file, "phase_seconds.scenarios", 0, 1e9);
    const double threads = required_number(m, file, "threads", 1, 1e6);
    f.replication_seconds = wall * threads / static_cast<double>(f.scenarios * f.samples * f.replications);
    f.replication_seconds_source = "the pilot's scenario phase (wall seconds x threads) per replication, an upper "
                                   "bound";
  }
  f.costs.scenario = s.scenario_cost;
  f.costs.sample += s.sample_seconds * s.cpu_price_per_hour / 3600.0;
  if (s.sample_seconds > 0) f.sample_cost_source += ", plus --sample-seconds at the CPU price";
  f.costs.replication = f.replication_seconds * s.cpu_price_per_hour / 3600.0;
  return f;
}

}  // namespace

namespace {

/// One paired difference (condition a − condition b) of one metric over the cells where both rows are ok, with the
/// templates and scenarios numbered anew over those cells.
struct PairData {
  std::vector<double> y, replication_variance;
  std::vector<std::size_t> tmpl, scenario;
};

PairData pair_data(const PilotRows& p, std::size_t a, std::size_t b, std::size_t metric, double R0) {
  PairData d;
  std::map<std::size_t, std::size_t> tmpl, scen;
  for (std::size_t c = 0; c < p.values.size(); ++c) {
    const double va = p.values[c][a][metric], vb = p.values[c][b][metric];
    if (std::isnan(va) || std::isnan(vb)) continue;
    d.y.push_back(va - vb);
    // A win rate is the mean of R0 Bernoulli replications; their difference's variance per replication, taking the
    // two conditions' replications as independent (docs/METRICS.md "Study design": not identified under common
    // random numbers from win counts). The advantage draws no replication: 0.
    d.replication_variance.push_back(metric == 1 ? (va * (1 - va) + vb * (1 - vb)) * R0 / (R0 - 1) : 0.0);
    d.tmpl.push_back(tmpl.emplace(p.cell_template[c], tmpl.size()).first->second);
    d.scenario.push_back(scen.emplace(p.cell_scenario[c], scen.size()).first->second);
  }
  return d;
}

struct DesignRow {
  std::string name;
  Design design;
};

/// The pilot's own design and the designs that reach the target: the optimum, the pilot's (K, R) with more
/// scenarios, one sample at the pilot's R, and the optimum's K at the pilot's R.
std::vector<DesignRow> design_rows(const DesignComponents& c, std::size_t n0, const PilotFacts& f,
                                   const DesignSettings& s) {
  const std::size_t K0 = f.samples, R0 = f.replications;
  Design pilot;
  pilot.n = n0;
  pilot.samples = K0;
  pilot.replications = R0;
  pilot.variance = design_variance(c, n0, K0, R0);
  pilot.mde = design_mde(c, n0, K0, R0, s.alpha, s.power);
  pilot.cost = design_cost(f.costs, n0, K0, R0);
  const Design opt = optimal_design(c, f.costs, s.target_mde, s.alpha, s.power, s.limits);
  auto at = [&](std::size_t K, std::size_t R) {
    return design_at(c, f.costs, K, R, s.target_mde, s.alpha, s.power, s.limits);
  };
  std::vector<DesignRow> rows{{"pilot", pilot}, {"optimum", opt}, {"pilot_samples_replications", at(K0, R0)},
                              {"one_sample", at(1, R0)}};
  if (opt.n > 0 && opt.replications != R0) rows.push_back({"optimum_samples_pilot_replications", at(opt.samples, R0)});
  return rows;
}

std::string num(double v) { return std::isfinite(v) ? fmt::format("{:.8g}", v) : std::string(); }

const std::vector<std::string>& design_header() {
  static const std::vector<std::string> h = {
      "condition_a", "condition_b", "metric", "design", "n", "samples", "replications", "mde", "target_mde",
      "power", "alpha", "reached", "cost_usd", "var_templates", "var_scenarios", "var_samples", "var_replications",
      "truncated", "mde_floor", "note"};
  return h;
}

}  // namespace

namespace {

struct Output {
  CsvTable csv{design_header()};
  std::string md;
};

void add_pair(Output& out, const PilotRows& p, std::size_t a, std::size_t b, std::size_t m, const PilotFacts& f,
              const DesignSettings& s) {
  const PairData d = pair_data(p, a, b, m, static_cast<double>(f.replications));
  DesignComponents c = design_components(d.y, d.tmpl, d.scenario, d.replication_variance,
                                         static_cast<double>(f.replications));
  std::string note;
  if (c.anova.templates == 1) {
    c.between_templates = 0;
    note = "one template: var_templates not estimable, taken as 0";
  }
  const bool identified = std::isfinite(c.anova.ms_within) && std::isfinite(c.anova.ms_scenario) && d.y.size() > 2;
  if (!identified) note = "not identified: needs two scenarios per template with at least one of two samples ok";
  const std::string head = fmt::format("{} − {}: {}", p.conditions[a], p.conditions[b], kMetrics[m]);
  out.md += fmt::format("\n## {}\n\n", head);
  if (!identified) {
    out.csv.add({p.conditions[a], p.conditions[b], kMetrics[m], "none", "", "", "", "", num(s.target_mde),
                 num(s.power), num(s.alpha), "0", "", "", "", "", "", "", "", note});
    out.md += note + ".\n";
    return;
  }
  const double floor = design_mde_floor(c, s.alpha, s.power);
  out.md += fmt::format("Components: templates {}, scenarios {}, samples {}, replications {}{}. MDE floor (σ²_T/T) {}.{}"
                        "\n\n| design | n | K | R | MDE | cost (USD) | reaches {} |\n|---|---:|---:|---:|---:|---:|---|\n",
                        num(c.between_templates), num(c.between_scenarios), num(c.between_samples),
                        num(c.between_replications), c.truncated ? " (a negative estimate set to 0)" : "", num(floor),
                        note.empty() ? "" : " " + note + ".", num(s.target_mde));
  for (const DesignRow& r : design_rows(c, d.scenario.empty() ? 0 : c.anova.scenarios, f, s)) {
    const Design& g = r.design;
    const bool found = g.n > 0, reached = found && g.mde <= s.target_mde;
    const std::string n = found ? std::to_string(g.n) : "", k = g.samples > 0 ? std::to_string(g.samples) : "",
                      rr = g.replications > 0 ? std::to_string(g.replications) : "";
    out.csv.add({p.conditions[a], p.conditions[b], kMetrics[m], r.name, n, k, rr, found ? num(g.mde) : "",
                 num(s.target_mde), num(s.power), num(s.alpha), reached ? "1" : "0", found ? num(g.cost) : "",
                 num(c.between_templates), num(c.between_scenarios), num(c.between_samples),
                 num(c.between_replications), c.truncated ? "1" : "0", num(floor),
                 found ? note
                 : !(s.target_mde > floor) ? "the target is not above mde_floor: more templates, not more scenarios"
                                           : "no design within the limits reaches the target"});
    out.md += found ? fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", r.name, n, k, rr, num(g.mde), num(g.cost),
                                  reached ? "yes" : "no")
                    : fmt::format("| {} | none within the limits | {} | {} | | | no |\n", r.name, k, rr);
  }
}

std::string md_head(const PilotFacts& f, const DesignSettings& s) {
  return fmt::format(
      "# Study design from a pilot run\n\nPilot: {} scenarios in {} templates, {} samples, {} simulator replications, "
      "{} conditions. Target: an MDE of {} at power {} and two-sided α = {} (the paired t-test over scenarios; "
      "docs/METRICS.md \"Study design\").\n\nCosts (USD): a scenario {} (--scenario-cost); a sample {} ({}); a "
      "replication {} ({} CPU seconds, {}, at {} USD per CPU-hour).{}{}\n\nThe replication component of blue_win_rate "
      "takes the two conditions' replications as independent binomials: under common random numbers win counts do "
      "not identify it, and this value is an upper one (docs/METRICS.md). The advantage draws no replication.\n",
      f.scenarios, f.templates, f.samples, f.replications, f.conditions, num(s.target_mde), num(s.power),
      num(s.alpha), num(f.costs.scenario), num(f.costs.sample), f.sample_cost_source, num(f.costs.replication),
      num(f.replication_seconds), f.replication_seconds_source, num(s.cpu_price_per_hour),
      f.resumed ? " The pilot was resumed: its measured costs count only its last invocation." : "",
      f.costs.sample > 0 ? ""
                         : " A sample costs nothing at these prices, so when a scenario costs more the design buys "
                           "samples up to --max-samples; --sample-seconds prices a policy's own CPU.");
}

/// The traces read_run_traces holds in memory: each a regular file of at most kMaxTraceBytes.
void check_trace_files(const std::string& dir) {
  for (const char* name : {"scenarios.csv", "per_scenario.csv", "bootstrap_summary.csv"}) {
    const std::filesystem::path path = std::filesystem::path(dir) / name;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
      throw CsvError(fmt::format("{}: missing or not a regular file, so {} is not a run", path.string(), dir));
    const auto size = std::filesystem::file_size(path, ec);
    if (ec || size > kMaxTraceBytes)
      throw CsvError(fmt::format("{}: larger than {} bytes, more than advplan design reads", path.string(),
                                 kMaxTraceBytes));
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> design_files(const std::string& run_dir, const DesignSettings& s) {
  if (!(s.target_mde > 0) || !(s.alpha > 0 && s.alpha < 1) || !(s.power > s.alpha && s.power < 1))
    throw ConfigError("advplan design needs --mde > 0, --alpha in (0, 1) and --power in (alpha, 1)");
  check_trace_files(run_dir);
  (void)read_run_traces(run_dir);  // the MANIFEST check and the schema
  const std::string path = (std::filesystem::path(run_dir) / "per_scenario.csv").string();
  const CsvTable raw = schema::read_per_scenario(path);
  if (!raw.has_col("sample"))
    throw CsvError(fmt::format("{}: has no sample column: advplan design needs a pilot run with samples: K of at "
                               "least 2 (config `samples`)",
                               path));
  const PilotRows p = pilot_rows(raw);
  if (p.samples < 2)
    throw CsvError(fmt::format("{}: one sample per scenario: advplan design needs samples: K of at least 2", path));
  const PilotFacts f = pilot_facts(run_dir, p, s);
  Output out;
  out.md = md_head(f, s);
  std::size_t pairs = 0;
  for (std::size_t a = 0; a < p.conditions.size(); ++a)
    for (std::size_t b = a + 1; b < p.conditions.size(); ++b) {
      if (p.blue[a] != p.blue[b] && p.red[a] != p.red[b]) continue;
      if (++pairs > kMaxPairs) continue;
      for (std::size_t m = 0; m < kMetrics.size(); ++m) add_pair(out, p, a, b, m, f, s);
    }
  if (pairs > kMaxPairs) out.md += fmt::format("\nOnly the first {} of {} pairs are designed.\n", kMaxPairs, pairs);
  if (pairs == 0) out.md += "\nNo two conditions share a BLUE or a RED policy: no paired difference to design.\n";
  return {{"design/design.csv", out.csv.to_string()}, {"design/design.md", out.md}};
}

}  // namespace advplan
