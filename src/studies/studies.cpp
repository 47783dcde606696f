#include "advplan/studies/studies.hpp"

#include <fmt/format.h>
#include <tbb/parallel_for.h>
#include <tbb/task_group.h>

#include <cmath>
#include <filesystem>
#include <mutex>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "advplan/core/error.hpp"
#include "advplan/council/council.hpp"
#include "advplan/run/scenario_eval.hpp"
#include "advplan/run/trace_schema.hpp"
#include "advplan/stats/text_table.hpp"
#include "advplan/metrics/rubric.hpp"
#include "advplan/stats/statistics.hpp"
#include "advplan/scenario/framing.hpp"
#include "advplan/sim/advantage.hpp"
#include "stats/joint_columns.hpp"

namespace advplan {
using io::CsvTable;
using io::fmt_real;

namespace {

std::vector<std::string> study_validators() {
  std::vector<std::string> v;
  for (const auto& x : rubric_validators())
    if (x.name != "base") v.push_back(x.name);
  return v;
}

std::vector<std::string> interval_row(std::vector<std::string> head, const Interval& i) {
  head.push_back(std::to_string(i.n));
  head.push_back(fmt_real(i.mean));
  head.push_back(fmt_real(i.lo));
  head.push_back(fmt_real(i.hi));
  return head;
}

}  // namespace

CsvTable rubric_sensitivity_table(const CsvTable& records, const BootstrapSettings& bs) {
  // scenario -> validator -> record_id -> score
  std::map<std::string, std::map<std::string, std::map<std::string, double>>> by;
  std::vector<std::string> scenarios;
  std::set<std::string> seen;
  // Looked up once, when there is a row to read (an empty table needs none of its columns).
  std::size_t c_scenario = 0, c_validator = 0, c_record = 0, c_score = 0;
  if (records.size() > 0) {
    c_scenario = records.col("scenario_id");
    c_validator = records.col("validator");
    c_record = records.col("record_id");
    c_score = records.col("score");
  }
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& row = records.rows()[i];
    const std::string& s = row[c_scenario];
    if (seen.insert(s).second) scenarios.push_back(s);
    by[s][row[c_validator]][row[c_record]] = records.real(i, c_score);
  }
  auto mean_abs = [&](const std::string& s, const std::string& a, const std::string& b) {
    const auto& va = by[s][a];
    const auto& vb = by[s][b];
    double sum = 0;
    std::size_t n = 0;
    for (const auto& [rec, x] : va)
      if (auto it = vb.find(rec); it != vb.end()) {
        sum += std::abs(x - it->second);
        ++n;
      }
    return n ? sum / static_cast<double>(n) : std::nan("");
  };
  CsvTable out(schema::rubric_sensitivity());
  const auto vals = study_validators();
  // Every row's interval from one joint bootstrap over the scenarios (scope "rubric-sensitivity"), so the rows
  // come from the same resamples.
  detail::JointColumns cols(scenarios.size());
  std::vector<std::pair<std::vector<std::string>, std::size_t>> rows;  // (statistic, validator a, b), column
  std::vector<double> mean_agree(scenarios.size(), 0.0), mean_dev(scenarios.size(), 0.0);
  std::size_t pairs = 0;
  for (std::size_t a = 0; a < vals.size(); ++a)
    for (std::size_t b = a + 1; b < vals.size(); ++b) {
      std::vector<double> agree;
      for (std::size_t s = 0; s < scenarios.size(); ++s) {
        const double d = mean_abs(scenarios[s], vals[a], vals[b]);
        agree.push_back(1.0 - d);
        mean_agree[s] += 1.0 - d;
      }
      ++pairs;
      rows.push_back({{"agreement", vals[a], vals[b]}, cols.add(std::move(agree))});
    }
  for (auto& x : mean_agree) x /= static_cast<double>(std::max<std::size_t>(1, pairs));
  rows.push_back({{"mean_pairwise_agreement", "", ""}, cols.add(mean_agree)});
  for (const auto& v : vals) {
    std::vector<double> dev;
    for (std::size_t s = 0; s < scenarios.size(); ++s) {
      const double d = mean_abs(scenarios[s], v, "base");
      dev.push_back(d);
      mean_dev[s] += d;
    }
    rows.push_back({{"deviation_from_base", v, "base"}, cols.add(std::move(dev))});
  }
  for (auto& x : mean_dev) x /= static_cast<double>(std::max<std::size_t>(1, vals.size()));
  rows.push_back({{"mean_deviation_from_base", "", "base"}, cols.add(mean_dev)});
  const std::vector<Interval> iv = cols.intervals(bs, "rubric-sensitivity");
  for (const auto& [labels, col] : rows) out.add(interval_row(labels, iv[col]));
  return out;
}

namespace {

/// Per-scenario values of `metric` under `cond`, keyed by scenario id.
std::map<std::string, double> by_scenario(const CsvTable& per, const std::string& cond, const std::string& metric) {
  std::map<std::string, double> m;
  const auto cc = per.col("condition"), cs = per.col("status"), ci = per.col("scenario_id");
  std::optional<std::size_t> cm;  // looked up at the first matching row, as before
  for (std::size_t i = 0; i < per.size(); ++i) {
    const auto& r = per.rows()[i];
    if (r[cc] != cond || r[cs] != "ok") continue;
    if (!cm) cm = per.col(metric);
    m[r[ci]] = per.real(i, *cm);
  }
  return m;
}

}  // namespace

CsvTable components_table(const CsvTable& per, const CsvTable* trace, const StudiesConfig& st,
                          const BootstrapSettings& bs) {
  CsvTable out(schema::components());
  // The rows in table order: a fixed row, or an interval of a column of one of two joint bootstraps, over the
  // scenarios (sorted by id, scope "components") or over the council trace's ok rows ("components-council").
  struct Pending {
    std::vector<std::string> labels;
    int scope = -1;  ///< -1: `labels` is the whole row
    std::size_t column = 0;
  };
  std::vector<Pending> rows;
  // Per condition and metric, the ok rows' values by scenario; the units are every scenario of per_scenario.csv.
  std::map<std::string, std::size_t> unit_of;
  const std::size_t c_scenario = per.col("scenario_id"), c_condition = per.col("condition");
  for (const auto& row : per.rows()) unit_of.emplace(row[c_scenario], 0);
  {
    std::size_t u = 0;
    for (auto& [id, index] : unit_of) index = u++;
  }
  detail::JointColumns scenario_cols(unit_of.size());
  auto column = [&](const std::map<std::string, double>& by_id) {
    std::vector<double> v(unit_of.size(), std::nan(""));
    for (const auto& [id, x] : by_id) v[unit_of.at(id)] = x;
    return v;
  };
  auto paired = [&](const std::string& component, const std::string& a, const std::string& b, const std::string& metric) {
    const auto ma = by_scenario(per, a, metric), mb = by_scenario(per, b, metric);
    std::map<std::string, double> d;
    for (const auto& [sid, x] : ma)
      if (auto it = mb.find(sid); it != mb.end() && !std::isnan(x) && !std::isnan(it->second)) d[sid] = x - it->second;
    if (d.empty()) return;
    rows.push_back({{component, a + " - " + b, metric}, 0, scenario_cols.add(column(d))});
  };
  auto single = [&](const std::string& component, const std::string& comparison, const std::string& cond,
                    const std::string& metric) {
    std::map<std::string, double> v;
    for (const auto& [sid, x] : by_scenario(per, cond, metric))
      if (!std::isnan(x)) v[sid] = x;
    if (v.empty()) return;
    rows.push_back({{component, comparison, metric}, 0, scenario_cols.add(column(v))});
  };
  // Response search: best-of-k against a single sample at equal selector.
  for (const char* m : {"advantage", "red_quality", "blue_win_rate"}) paired("response_search", st.best_of_k, st.single, m);
  // Selector objective: greedy against constraint-aware on the same candidates.
  for (const char* m : {"changed_choice", "quality_regret", "structural_gain"})
    single("selector_objective", fmt::format("{} vs {} (same candidates)", st.constraint, st.greedy), st.greedy, m);
  for (const char* m : {"red_quality", "red_coherence", "advantage"}) paired("selector_objective", st.constraint, st.greedy, m);
  // LLM-contract behaviour.
  const std::string& llm = st.llm_contract;
  if (!by_scenario(per, llm, "red_coherence").empty()) {
    for (const char* m : {"contract_parsed", "contract_repaired", "contract_failed", "contract_retries"}) {
      double sum = 0;
      std::size_t n = 0;
      const std::size_t c_metric = per.col(m);
      for (std::size_t i = 0; i < per.size(); ++i)
        if (per.rows()[i][c_condition] == llm) {
          const double x = per.real(i, c_metric);
          if (!std::isnan(x)) sum += x;
          ++n;
        }
      rows.push_back({{"llm_contract", llm + " (count over scenarios)", m, std::to_string(n), fmt_real(sum), "", ""}});
    }
    single("llm_contract", llm + " contract plans", llm, "red_coherence");
  }
  // Council revision.
  std::vector<std::size_t> ok_trace;
  if (trace && trace->size() > 0) {
    const std::size_t c_status = trace->col("status");
    for (std::size_t i = 0; i < trace->size(); ++i)
      if (trace->rows()[i][c_status] == "ok") ok_trace.push_back(i);
  }
  detail::JointColumns trace_cols(ok_trace.size());
  if (trace && trace->size() > 0) {
    for (const char* m : {"robustness_margin", "pressure_reduction"}) {
      std::vector<double> v;
      if (!ok_trace.empty()) {  // a column is looked up once there is a row to read, as before
        const std::size_t c_metric = trace->col(m);
        for (const std::size_t i : ok_trace) v.push_back(trace->real(i, c_metric));
      }
      rows.push_back({{"council_revision", "final - best first-round", m}, 1, trace_cols.add(std::move(v))});
    }
    for (const char* m : {"advantage", "blue_win_rate"}) paired("council_revision", st.council, st.council_baseline, m);
  }
  const std::vector<Interval> by_scenario_iv = scenario_cols.intervals(bs, "components"),
                              by_trace_iv = trace_cols.intervals(bs, "components-council");
  for (const Pending& r : rows)
    out.add(r.scope < 0 ? r.labels : interval_row(r.labels, (r.scope == 0 ? by_scenario_iv : by_trace_iv)[r.column]));
  return out;
}

namespace {

/// The run's corpus under FramingMode::metadata with the neutral framing: the framing study's common base.
std::vector<Scenario> framing_base_corpus(const RunPlan& plan, const std::vector<Scenario>* kept) {
  // Under metadata framing the run's scenarios are the base corpus but for the label (the framing has its own
  // stream and changes nothing else): a copy of the kept corpus, relabelled.
  if (kept && plan.cfg->framing_mode == FramingMode::metadata) {
    std::vector<Scenario> base(kept->size());
    tbb::parallel_for(std::size_t{0}, kept->size(), [&](std::size_t i) {
      base[i] = (*kept)[i];
      base[i].framing = Framing::neutral;
    });
    return base;
  }
  ExperimentConfig cfg = *plan.cfg;
  cfg.framing_mode = FramingMode::metadata;
  return generate_corpus(cfg, Framing::neutral);
}

/// The base corpus under (mode, framing): each scenario reframed.
std::vector<Scenario> reframed_corpus(const RunPlan& plan, const std::vector<Scenario>& base, FramingMode mode,
                                      Framing framing) {
  // The corpus is template-major (generate_corpus): scenario i comes from template i / seeds, which holds even
  // when two templates share an id.
  const auto& templates = plan.cfg->templates;
  const std::size_t per_template = templates.empty() ? 0 : base.size() / templates.size();
  if (per_template * templates.size() != base.size())
    throw Error(fmt::format("framing study: {} scenarios for {} templates", base.size(), templates.size()));
  std::vector<Scenario> corpus(base.size());
  tbb::parallel_for(std::size_t{0}, base.size(), [&](std::size_t i) {
    corpus[i] = reframe(base[i], templates[i / per_template], framing, mode);
  });
  return corpus;
}

/// The pairing's outcome on every scenario of `corpus`; with `known`, a scenario the run already played (known
/// returns its blue quality and advantage) is taken from there instead.
FramingOutcome outcome_on(const RunPlan& plan, const std::vector<Scenario>& corpus, const BluePolicy& blue,
                          const RedPolicy& red, const FramingPlayed* known = nullptr) {
  const ExperimentConfig& cfg = *plan.cfg;
  FramingOutcome out;
  out.blue_quality.resize(corpus.size());
  out.advantage.resize(corpus.size());
  const std::string& spec = cfg.studies.framing_blue;
  tbb::parallel_for(std::size_t{0}, corpus.size(), [&](std::size_t i) {
    const Scenario& sc = corpus[i];
    if (known)
      if (const auto o = known->find(sc.id); o != known->end()) {
        std::tie(out.blue_quality[i], out.advantage[i]) = o->second;
        return;
      }
    Rng rng = Rng::keyed(cfg.seed, sc.id, "blue/" + spec);  // the stream the run's conditions use
    const BluePlanResult b = blue.plan(sc, rng);
    if (!b.plan) {
      out.blue_quality[i] = out.advantage[i] = std::nan("");
      return;
    }
    const double qb = quality(*b.plan, sc, cfg.quality).q;
    RedRequest req = red_request(sc, *b.plan, plan.ctx, "baseline");
    req.detail = RedDetail::quality;  // the arm reads the chosen response's quality alone
    const RedResponse r = red.respond(req);
    out.blue_quality[i] = qb;
    out.advantage[i] = r.chosen() ? advantage(qb, r.chosen()->q.q) : std::nan("");
  });
  return out;
}

}  // namespace

FramingOutcome framing_outcome(const RunPlan& plan, FramingMode mode, Framing framing, const BluePolicy& blue,
                               const RedPolicy& red, const std::vector<Scenario>* corpus) {
  return outcome_on(plan, reframed_corpus(plan, framing_base_corpus(plan, corpus), mode, framing), blue, red);
}

std::vector<std::pair<std::string, std::string>> run_studies(const RunPlan& plan, const CsvTable& per,
                                                             const CsvTable& records, const CsvTable* council_trace,
                                                             const BootstrapSettings& bs, const std::vector<Scenario>* corpus,
                                                             const FramingPlayed* played_games) {
  const ExperimentConfig& cfg = *plan.cfg;
  // The studies are independent (their own keyed streams, their own policy instances or the run's with its
  // locks), so they run concurrently, each into its own list; the lists are joined in a fixed order, so the files
  // do not depend on the thread count. Each has serial parts that the others' parallel loops fill.
  using Files = std::vector<std::pair<std::string, std::string>>;
  Files sensitivity, framing, components, attribution;
  tbb::task_group group;
  if (cfg.studies.rubric && records.size() > 0)
    group.run([&] {
      sensitivity.emplace_back("studies/rubric_records.csv", records.to_string());
      sensitivity.emplace_back("studies/rubric_sensitivity.csv", rubric_sensitivity_table(records, bs).to_string());
    });
  if (cfg.studies.framing)
    group.run([&] {
      // The framing study replays one configured pairing (the paper: the seed plan against greedy@8).
      const auto blue = make_blue_policy(cfg.studies.framing_blue, plan.ctx);
      const auto red = make_red_policy(cfg.studies.framing_red, plan.ctx);
      CsvTable t(schema::framing());
      // The base corpus is the metadata neutral arm itself, played once; the other arms reframe it. An arm takes the
      // base's outcome instead of being played when both policies are reproducible (functions of the scenario and
      // their keyed streams) and its scenarios are the base's (the applied neutral arm, when no template's neutral
      // framing changes anything), or differ from them in the framing label alone (every metadata arm) while
      // neither policy reads the label (PolicyInfo::reads_framing). Live models are asked again. One reframed
      // corpus is alive at a time, besides the base.
      const std::vector<Scenario> base = framing_base_corpus(plan, corpus);
      const bool reuse = blue->info().reproducible && red->info().reproducible;
      const bool label_blind = reuse && !blue->info().reads_framing && !red->info().reads_framing;
      // The base arm's games the run already played (the observer's: same policies, streams and scenarios up to
      // the label), when the label cannot matter; the rest are played here.
      const FramingPlayed* played = label_blind ? played_games : nullptr;
      const FramingOutcome base_outcome = outcome_on(plan, base, *blue, *red, played);
      auto arm = [&](FramingMode mode, Framing f) -> FramingOutcome {
        if (mode == FramingMode::metadata && (f == Framing::neutral || label_blind)) return base_outcome;
        const std::vector<Scenario> corpus = reframed_corpus(plan, base, mode, f);
        if (reuse && corpus == base) return base_outcome;
        return outcome_on(plan, corpus, *blue, *red);
      };
      // Every row's interval from one joint bootstrap over the base corpus's scenarios (scope "framing"): the
      // per-scenario deltas (framing - neutral) and the mean absolute deltas, of both modes.
      detail::JointColumns cols(base.size());
      std::vector<std::pair<std::vector<std::string>, std::size_t>> rows;  // (mode, framing, metric), column
      for (FramingMode mode : {FramingMode::metadata, FramingMode::applied}) {
        const FramingOutcome neutral = arm(mode, Framing::neutral);
        std::vector<double> abs_q(neutral.blue_quality.size(), 0.0), abs_a(neutral.advantage.size(), 0.0);
        for (Framing f : {Framing::blue_favorable, Framing::red_favorable}) {
          const FramingOutcome o = arm(mode, f);
          for (const auto& [metric, a, b, acc] :
               {std::tuple{"blue_quality", &o.blue_quality, &neutral.blue_quality, &abs_q},
                std::tuple{"advantage", &o.advantage, &neutral.advantage, &abs_a}}) {
            std::vector<double> d(std::min(a->size(), b->size()));
            for (std::size_t i = 0; i < d.size(); ++i) d[i] = (*a)[i] - (*b)[i];
            for (std::size_t i = 0; i < a->size(); ++i) (*acc)[i] += std::abs((*a)[i] - (*b)[i]) / 2.0;
            rows.push_back({{std::string(to_string(mode)), std::string(to_string(f)), metric}, cols.add(std::move(d))});
          }
        }
        for (const auto& [metric, acc] : {std::pair{"blue_quality", &abs_q}, std::pair{"advantage", &abs_a}})
          rows.push_back({{std::string(to_string(mode)), "mean_abs", metric}, cols.add(*acc)});
      }
      const std::vector<Interval> iv = cols.intervals(bs, "framing");
      for (const auto& [labels, col] : rows)
        t.add({labels[0], labels[1], labels[2], fmt_real(iv[col].mean), fmt_real(iv[col].lo), fmt_real(iv[col].hi)});
      framing.emplace_back("studies/framing.csv", t.to_string());
    });
  if (cfg.studies.components)
    group.run([&] {
      components.emplace_back("studies/components.csv",
                              components_table(per, council_trace, cfg.studies, bs).to_string());
    });
  if (cfg.studies.attribution) group.run([&] { attribution = attribution_files(per, cfg, bs); });
  Files validity;
  if (cfg.sim.model == "engagement") group.run([&] { validity = simulator_validity_files(per, cfg, bs); });
  group.wait();
  Files files;
  for (Files* part : {&sensitivity, &framing, &components, &attribution, &validity})
    for (auto& f : *part) files.push_back(std::move(f));
  return files;
}

namespace schema {

const std::vector<std::string>& rubric_records() {
  static const std::vector<std::string> c{"record_id", "scenario_id", "record_kind", "validator", "score"};
  return c;
}

const std::vector<std::string>& rubric_sensitivity() {
  static const std::vector<std::string> c{"statistic", "validator_a", "validator_b", "n", "mean", "ci_lo", "ci_hi"};
  return c;
}

const std::vector<std::string>& framing() {
  static const std::vector<std::string> c{"framing_mode", "framing", "metric", "delta", "ci_lo", "ci_hi"};
  return c;
}

const std::vector<std::string>& components() {
  static const std::vector<std::string> c{"component", "comparison", "metric", "n", "value", "ci_lo", "ci_hi"};
  return c;
}

}  // namespace schema

namespace {

TextTable csv_table(const std::string& name, const std::string& caption, const CsvTable& csv) {
  TextTable t{name, caption, csv.header(), {}};
  for (const auto& r : csv.rows()) t.rows.push_back(r);
  return t;
}

/// The study tables of the study CSVs given (nullptr: that study is not in the run).
std::vector<std::pair<std::string, std::string>> study_tables_of(const CsvTable* sensitivity, const CsvTable* framing,
                                                                 const CsvTable* components,
                                                                 const CsvTable* attribution) {
  std::vector<std::pair<std::string, std::string>> files;
  auto emit = [&](const TextTable& t) {
    files.emplace_back(t.name + ".md", t.markdown());
    files.emplace_back(t.name + ".tex", t.latex());
  };
  if (sensitivity) emit(csv_table("study_rubric_sensitivity", "Rubric-sensitivity study", *sensitivity));
  if (framing) emit(csv_table("study_framing", "Framing-sensitivity study", *framing));
  if (components) emit(csv_table("study_components", "Component diagnostics", *components));
  if (attribution) emit(attribution_table(*attribution));
  return files;
}

/// The study CSVs' schemas by file name.
const std::vector<std::string>* study_schema(const std::string& file) {
  if (file == "studies/rubric_sensitivity.csv") return &schema::rubric_sensitivity();
  if (file == "studies/framing.csv") return &schema::framing();
  if (file == "studies/components.csv") return &schema::components();
  if (file == "studies/attribution.csv") return &schema::attribution();
  return nullptr;
}

}  // namespace

std::vector<ObserverTrace> StudiesObserver::traces(const RunPlan&) const {
  return {{"rubric_records.csv", schema::rubric_records()}};
}

void StudiesObserver::begin(const RunPlan& plan, const RunScope& scope) {
  const ExperimentConfig& cfg = *plan.cfg;
  std::lock_guard lock(m_);
  cfg_ = &cfg;
  played_.clear();
  // The framing study's base arm is the metadata neutral corpus; under metadata framing the run's scenarios
  // differ from it in the label alone, so the run's condition pairing the study's policies (answering the
  // "baseline" stream, as the study does) plays its games, when no map changes the qualities. The study reads
  // the run's corpus under metadata framing alone: under applied framing its base is not the run's.
  keep_played_ = scope.whole_run_here && cfg.studies.framing && cfg.framing_mode == FramingMode::metadata &&
                 !cfg.terrain_geo;
  wants_corpus_ = scope.whole_run_here && cfg.studies.framing && cfg.framing_mode == FramingMode::metadata;
}

void StudiesObserver::scenario(std::size_t, const Scenario& sc, const ScenarioOutcome& o,
                             std::vector<std::vector<TraceRow>>& rows) {
  const StudiesConfig& st = cfg_->studies;
  // Rubric-sensitivity records: for each configured source, the coherence parts of that side's plan in that
  // condition, scored by every validator.
  if (st.rubric)
    for (const auto& src : st.rubric_records) {
      const CoherenceParts* parts = nullptr;
      for (const auto& p : o.played) {
        if (p.condition->label != src.condition) continue;
        const auto& side = src.side == Side::Blue ? p.blue_parts : p.red_parts;
        if (side) parts = &*side;
      }
      if (!parts) continue;
      for (const auto& v : rubric_validators())
        rows[0].push_back({sc.id + "/" + src.kind, sc.id, src.kind, v.name,
                           fmt_real(weighted_coherence(*parts, v.weights))});
    }
  if (keep_played_)
    for (const auto& p : o.played)
      if (p.quality_advantage && p.condition->settings.empty() && p.condition->blue == st.framing_blue &&
          p.condition->red == st.framing_red) {  // (a sweep point plays under its own settings)
        std::lock_guard lock(m_);
        played_.insert_or_assign(sc.id, *p.quality_advantage);
      }
}

std::vector<std::pair<std::string, std::string>> StudiesObserver::finish(const RunArtifacts& run) {
  namespace fs = std::filesystem;
  const fs::path trace_path = fs::path(run.run.dir) / council_trace_file().name;
  std::optional<CsvTable> council_trace;
  if (fs::exists(trace_path)) council_trace = CsvTable::read(trace_path.string(), schema::council_trace());
  auto files = run_studies(run.plan, run.run.per_scenario, run.traces.at(0), council_trace ? &*council_trace : nullptr,
                           run.bootstrap, run.corpus, keep_played_ ? &played_ : nullptr);
  // The study tables, from the files as written.
  std::map<std::string, CsvTable> csv;
  for (const auto& [file, text] : files)
    if (const auto* cols = study_schema(file)) csv.emplace(file, CsvTable::parse(text, file, *cols));
  auto of = [&](const char* f) { return csv.contains(f) ? &csv.at(f) : nullptr; };
  for (auto& [name, text] : study_tables_of(of("studies/rubric_sensitivity.csv"), of("studies/framing.csv"),
                                            of("studies/components.csv"), of("studies/attribution.csv")))
    files.emplace_back("tables/" + name, std::move(text));
  return files;
}


std::shared_ptr<RunObserver> make_studies_observer() { return std::make_shared<StudiesObserver>(); }

std::vector<std::pair<std::string, std::string>> study_tables(const std::string& run_dir) {
  namespace fs = std::filesystem;
  std::map<std::string, CsvTable> csv;
  for (const char* f :
       {"studies/rubric_sensitivity.csv", "studies/framing.csv", "studies/components.csv", "studies/attribution.csv"})
    if (const fs::path p = fs::path(run_dir) / f; fs::exists(p)) csv.emplace(f, CsvTable::read(p.string(), *study_schema(f)));
  auto of = [&](const char* f) { return csv.contains(f) ? &csv.at(f) : nullptr; };
  return study_tables_of(of("studies/rubric_sensitivity.csv"), of("studies/framing.csv"), of("studies/components.csv"),
                         of("studies/attribution.csv"));
}

}  // namespace advplan
