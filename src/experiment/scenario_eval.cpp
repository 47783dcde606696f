#include "advplan/experiment/scenario_eval.hpp"

#include <fmt/format.h>

#include <set>

#include "advplan/core/error.hpp"
#include "advplan/core/validation.hpp"
#include "advplan/council/council.hpp"
#include "advplan/experiment/trace_schema.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/metrics/frontier.hpp"
#include "advplan/metrics/rubric.hpp"
#include "advplan/metrics/structure.hpp"
#include "advplan/sim/advantage.hpp"
#include "advplan/sim/wargame.hpp"

namespace advplan {
using io::fmt_real;

namespace {

/// Raw capability: the sum of the capabilities of the distinct assets a plan uses.
double raw_capability(const Plan& p, const Scenario& sc) {
  std::set<std::string> used;
  for (const auto& a : p.actions) used.insert(a.asset);
  double s = 0;
  for (const auto& id : used)
    if (const Asset* a = sc.find_asset(id)) s += a->capability;
  return s;
}

struct BlueEval {
  BluePlanResult result;
  QualityParts q;
  CoherenceParts d;
  StructureParts st;
  double raw = 0;
};

BlueEval eval_blue(BluePlanResult r, const Scenario& sc, const QualityWeights& w) {
  BlueEval e;
  e.result = std::move(r);
  if (e.result.plan) {
    const auto layout = layout_plan(*e.result.plan, sc);
    e.q = quality(layout, sc, Side::Blue, w);
    e.d = coherence(*e.result.plan, layout, sc);
    e.st = structure(*e.result.plan);
    e.raw = raw_capability(*e.result.plan, sc);
  }
  return e;
}

std::string i2s(long long v) { return std::to_string(v); }

/// The row in schema::per_scenario() order; `fields` fills the named columns, the rest stay empty.
class RowBuilder {
 public:
  RowBuilder() : row_(schema::per_scenario().size()) {}
  RowBuilder& set(std::string_view col, std::string v) {
    const auto& h = schema::per_scenario();
    for (std::size_t i = 0; i < h.size(); ++i)
      if (h[i] == col) {
        row_[i] = std::move(v);
        return *this;
      }
    throw std::logic_error(fmt::format("per_scenario has no column {}", col));
  }
  RowBuilder& set(std::string_view col, double v) { return set(col, fmt_real(v)); }
  Row take() { return std::move(row_); }

 private:
  Row row_;
};

void append_council_rows(ScenarioOutcome& out, const Scenario& sc, const CouncilRecord& rec, const Row& result) {
  const CouncilCandidate* sel = rec.chosen();
  if (!sel || result.empty()) {
    Row r(schema::council_trace().size());
    r[0] = sc.id;
    r[r.size() - 2] = "failed";
    r[r.size() - 1] = sel ? "the council plan met no RED response" : rec.failure;
    out.council_trace.push_back(std::move(r));
  } else {
    out.council_trace.push_back({sc.id, sel->id, result[0], result[1], result[2], result[3],
                                 fmt_real(rec.council_diversity), fmt_real(rec.revised_diversity),
                                 fmt_real(rec.consensus_gap), fmt_real(sel->pressure), fmt_real(rec.robustness_margin),
                                 fmt_real(rec.pressure_reduction), i2s(rec.n_initial), i2s(rec.n_revised),
                                 i2s(sel->round), result[4], "ok", ""});
  }
  for (const auto& c : rec.candidates)
    out.council_candidates.push_back({sc.id, c.id, i2s(c.round), c.role, c.parent_id, fmt_real(c.q.q), fmt_real(c.d.D),
                                      fmt_real(c.diversity), fmt_real(c.pressure), std::string(to_string(c.critique)),
                                      c.critique_red_id, fmt_real(c.parts[0]), fmt_real(c.parts[1]), fmt_real(c.parts[2]),
                                      fmt_real(c.parts[3]), fmt_real(c.score), fmt_real(c.round1_score),
                                      c.shortlisted ? "1" : "0", c.selected ? "1" : "0", c.mitigation});
}

}  // namespace

ScenarioOutcome evaluate_scenario(const Scenario& sc, const RunPlan& plan) {
  const ExperimentConfig& cfg = *plan.cfg;
  ScenarioOutcome out;
  std::size_t n_blue = 0, n_red = 0;
  for (const auto& a : sc.assets) (a.side == Side::Blue ? n_blue : n_red) += 1;
  out.scenario_row = {sc.id,
                      sc.template_id,
                      std::to_string(sc.seed),
                      sc.terrain.family,
                      std::string(to_string(sc.framing)),
                      std::to_string(n_blue),
                      std::to_string(n_red),
                      std::to_string(sc.blue_seed_plans.size()),
                      fmt_real(sc.terrain.mobility),
                      fmt_real(sc.terrain.visibility),
                      fmt_real(sc.terrain.exposure),
                      sc.blue_objective};

  // BLUE plans: one per distinct BLUE policy, each from its own keyed stream.
  std::map<std::string, BlueEval> blues;
  std::optional<CouncilRecord> council_rec;
  Row council_row;  // the per-scenario result of the council condition, for the council trace
  std::map<std::string, CoherenceParts> red_parts;  // RED coherence per condition, for the rubric study
  for (const auto& c : plan.conditions) {
    if (blues.contains(c.blue)) continue;
    Rng rng = Rng::keyed(cfg.seed, sc.id, "blue/" + c.blue);
    BluePlanResult r;
    try {
      const BluePolicy* policy = plan.blues.at(c.blue).get();
      if (const auto* council = dynamic_cast<const CouncilPolicy*>(policy)) {
        // The council's whole deliberation goes to the council trace; its plan is checked like any other.
        council_rec = council->deliberate(sc, rng);
        if (const auto* chosen = council_rec->chosen()) {
          const auto v = validate_plan(chosen->plan, sc, Side::Blue);
          if (v.empty())
            r.plan = chosen->plan;
          else
            r.failure = "council selected an invalid plan: " + v.front().str();
        } else {
          r.failure = council_rec->failure;
        }
      } else {
        std::unique_lock<std::mutex> serial;
        if (std::mutex* m = plan.lock_for("blue:" + c.blue)) serial = std::unique_lock(*m);
        r = policy->plan(sc, rng);
      }
    } catch (const std::exception& e) {
      r.failure = fmt::format("BLUE policy {} failed: {}", c.blue, e.what());
    }
    if (r.plan && c.group != "reference") out.produced_plan = true;
    blues.emplace(c.blue, eval_blue(std::move(r), sc, cfg.quality));
  }

  const SimNoise noise = draw_noise(cfg.seed, sc.id, cfg.sim);  // common random numbers across conditions
  CandidateCache cache;

  // The identifying columns every row of a condition starts with.
  auto base_row = [&](const Condition& c) {
    const RedPolicy& red = *plan.reds.at(c.red);
    RowBuilder row;
    row.set("scenario_id", sc.id)
        .set("template", sc.template_id)
        .set("terrain_family", sc.terrain.family)
        .set("framing", std::string(to_string(sc.framing)))
        .set("condition", c.label)
        .set("condition_group", c.group)
        .set("blue_policy", c.blue)
        .set("red_policy", red.label())
        .set("k", i2s(red.k()));
    return row;
  };
  auto evaluate_condition = [&](const Condition& c) {
    const RedPolicy& red = *plan.reds.at(c.red);
    const BlueEval& be = blues.at(c.blue);
    RowBuilder row = base_row(c);
    auto fail = [&](const std::string& why) {
      row.set("status", "failed").set("failure_reason", why);
      row.set("contract_parsed", i2s(be.result.contract.parsed))
          .set("contract_repaired", i2s(be.result.contract.repaired))
          .set("contract_failed", i2s(be.result.contract.failed))
          .set("contract_retries", i2s(be.result.contract.retries));
      out.per_scenario.push_back(row.take());
      ++out.failed_rows;
    };
    if (!be.result.plan) {
      fail("blue: " + be.result.failure);
      return;
    }
    const Plan& blue = *be.result.plan;
    const RedRequest req = red_request(sc, blue, cfg, "baseline");
    RedResponse resp;
    try {
      std::unique_lock<std::mutex> serial;
      if (std::mutex* m = plan.lock_for("red:" + c.red)) serial = std::unique_lock(*m);
      resp = red.respond(req, &cache);
    } catch (const Error& e) {
      resp.failure = e.what();
      resp.selected = -1;
    }
    ContractStats contract = be.result.contract;
    contract += resp.contract;
    const RedCandidate* rc = resp.chosen();
    if (!rc) {
      fail("red: " + resp.failure);
      return;
    }

    // Candidate diagnostics over the set the policy chose among (DESIGN.md §3).
    std::vector<double> qs, ds;
    std::vector<CategorySet> cats;
    for (const auto& x : resp.candidates) {
      qs.push_back(x.q.q);
      ds.push_back(x.d.D);
      cats.push_back(x.categories);
    }
    const int g = select_quality_greedy(qs);
    const int cd = select_constraint_aware(qs, ds, plan.lambda);
    const auto front = pareto_front(qs, ds);
    std::size_t n_front = 0;
    for (bool b : front) n_front += b ? 1 : 0;

    const Force fb{be.raw, be.q.q, be.d.D};
    const Force fr{raw_capability(rc->plan, sc), rc->q.q, rc->d.D};
    const SimResult sim = simulate(fb, fr, noise, cfg.sim);

    row.set("status", "ok")
        .set("blue_plan_id", blue.plan_id)
        .set("red_plan_id", rc->plan.plan_id)
        .set("blue_quality", be.q.q)
        .set("blue_e", be.q.e)
        .set("blue_c", be.q.c)
        .set("blue_r", be.q.r)
        .set("blue_coherence", be.d.D)
        .set("red_quality", rc->q.q)
        .set("red_coherence", rc->d.D)
        .set("advantage", advantage(be.q.q, rc->q.q))
        .set("nash_gap", nash_gap(be.q.q, rc->q.q))
        .set("blue_win_rate", sim.win_rate)
        .set("blue_final_strength", sim.blue_final)
        .set("red_final_strength", sim.red_final)
        .set("diversity", action_type_diversity(cats))
        .set("quality_spread", quality_spread(qs))
        .set("pareto_count", i2s(static_cast<long long>(n_front)))
        .set("changed_choice", i2s(g != cd ? 1 : 0))
        .set("quality_regret", qs[static_cast<std::size_t>(g)] - qs[static_cast<std::size_t>(cd)])
        .set("structural_gain", ds[static_cast<std::size_t>(cd)] - ds[static_cast<std::size_t>(g)])
        .set("blue_O", be.st.O)
        .set("blue_PV", be.st.P_V)
        .set("blue_W", be.st.W)
        .set("red_pressure", rc->pressure.magnitude)
        .set("red_pressure_category", std::string(to_string(rc->pressure.category)))
        .set("candidates_valid", i2s(static_cast<long long>(resp.candidates.size())))
        .set("candidates_dropped", i2s(resp.dropped))
        .set("contract_parsed", i2s(contract.parsed))
        .set("contract_repaired", i2s(contract.repaired))
        .set("contract_failed", i2s(contract.failed))
        .set("contract_retries", i2s(contract.retries))
        .set("prompt_tokens", contract.tokens_reported ? i2s(contract.prompt_tokens) : "")
        .set("completion_tokens", contract.tokens_reported ? i2s(contract.completion_tokens) : "");
    if (c.blue == "seed") red_parts.emplace(c.label, rc->d);
    if (c.blue == "council" && council_row.empty()) {
      council_row = {rc->plan.plan_id, fmt_real(advantage(be.q.q, rc->q.q)), fmt_real(be.d.D), fmt_real(rc->d.D),
                     fmt_real(sim.win_rate)};
    }
    out.per_scenario.push_back(row.take());

    for (std::size_t i = 0; i < resp.candidates.size(); ++i) {
      const auto& x = resp.candidates[i];
      out.candidates.push_back({sc.id, c.label, i2s(red.k()), i2s(x.index), x.plan.plan_id, fmt_real(x.q.q),
                                fmt_real(x.d.D), fmt_real(x.pressure.magnitude),
                                std::string(to_string(x.pressure.category)), front[i] ? "1" : "0",
                                static_cast<int>(i) == g ? "1" : "0", static_cast<int>(i) == cd ? "1" : "0",
                                static_cast<int>(i) == resp.selected ? "1" : "0"});
    }
  };
  for (const auto& c : plan.conditions) {
    const std::size_t rows_before = out.per_scenario.size(), cand_before = out.candidates.size();
    try {
      evaluate_condition(c);
    } catch (const std::exception& e) {
      // One bad condition must not kill the sweep: drop its partial rows and record a failure row instead.
      out.per_scenario.resize(rows_before);
      out.candidates.resize(cand_before);
      RowBuilder row = base_row(c);
      row.set("status", "failed")
          .set("failure_reason", fmt::format("internal error: {}", e.what()));
      out.per_scenario.push_back(row.take());
      ++out.failed_rows;
    }
  }
  if (council_rec) append_council_rows(out, sc, *council_rec, council_row);
  if (cfg.studies.rubric) {
    // Rubric-sensitivity records: seed BLUE, sampled RED (single), LLM-contract RED, selected council BLUE.
    std::vector<std::pair<std::string, const CoherenceParts*>> records;
    if (auto it = blues.find("seed"); it != blues.end() && it->second.result.plan)
      records.emplace_back("seed_blue", &it->second.d);
    if (auto it = red_parts.find("single"); it != red_parts.end()) records.emplace_back("sampled_red", &it->second);
    if (auto it = red_parts.find("llm_offline"); it != red_parts.end()) records.emplace_back("llm_red", &it->second);
    if (auto it = blues.find("council"); it != blues.end() && it->second.result.plan)
      records.emplace_back("council_blue", &it->second.d);
    for (const auto& [kind, parts] : records)
      for (const auto& v : rubric_validators())
        out.rubric_records.push_back({sc.id + "/" + kind, sc.id, kind, v.name, fmt_real(weighted_coherence(*parts, v.weights))});
  }
  return out;
}

}  // namespace advplan
