#include "advplan/run/scenario_eval.hpp"


#include <fmt/format.h>

#include <array>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <deque>
#include <functional>
#include <optional>
#include <algorithm>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "advplan/core/error.hpp"
#include "advplan/core/stop_error.hpp"
#include "advplan/core/plan_json.hpp"
#include "advplan/core/validation.hpp"
#include "advplan/io/played_plans.hpp"
#include "advplan/run/geo_eval.hpp"
#include "advplan/policy/replan.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/io/sha256.hpp"
#include "advplan/run/trace_schema.hpp"
#include "advplan/run/transcripts.hpp"
#include "advplan/geo/map.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/metrics/frontier.hpp"
#include "advplan/metrics/structure.hpp"
#include "advplan/sim/advantage.hpp"
#include "advplan/sim/engagement.hpp"
#include "advplan/sim/wargame.hpp"

namespace advplan {
using io::fmt_real;

/// The replications of each cell whose engagements engagements.csv lists (every replication's outcome is in
/// replications.csv): the whole file would be 400 MB on the paper corpus.
constexpr int kTracedReplications = 5;

namespace {


struct BlueEval {
  BluePlanResult result;
  QualityParts q;
  CoherenceParts d;
  StructureParts st;
  double raw = 0;
  GeoPlanEffect geo;  ///< terrain: geo only
};

BlueEval eval_blue(BluePlanResult r, const Scenario& sc, const QualityWeights& w) {
  BlueEval e;
  e.result = std::move(r);
  if (e.result.plan) {
    const auto layout = layout_plan(*e.result.plan, sc);
    std::vector<double> cov;
    coverage_into(layout, cov);  // once, for q's risk and D's risk mitigation
    e.q = quality(layout, sc, Side::Blue, w, cov);
    e.d = coherence(*e.result.plan, layout, sc, cov);
    e.st = structure(*e.result.plan);
    e.raw = raw_capability(*e.result.plan, sc);
  }
  return e;
}

std::string i2s(long long v) { return std::to_string(v); }

/// The row in schema::per_scenario() order; `fields` fills the named columns, the rest stay empty.
class RowBuilder {
 public:
  /// `sample` >= 0: a run of several samples, whose rows carry the sample column (schema::per_scenario_sampled).
  explicit RowBuilder(int sample = -1) : row_(schema::per_scenario().size()), sample_(sample) {}
  RowBuilder& set(std::string_view col, std::string v) {
    // The column's index from a table built once (the schema is a static list): a row sets every column.
    static const std::unordered_map<std::string_view, std::size_t> index = [] {
      std::unordered_map<std::string_view, std::size_t> m;
      const auto& h = schema::per_scenario();
      for (std::size_t i = 0; i < h.size(); ++i) m.emplace(h[i], i);
      return m;
    }();
    const auto it = index.find(col);
    if (it == index.end()) throw std::logic_error(fmt::format("per_scenario has no column {}", col));
    row_[it->second] = std::move(v);
    return *this;
  }
  RowBuilder& set(std::string_view col, double v) { return set(col, fmt_real(v)); }
  Row take() {
    if (sample_ >= 0)
      row_.insert(row_.begin() + static_cast<std::ptrdiff_t>(schema::sample_column_per_scenario()),
                  std::to_string(sample_));
    return std::move(row_);
  }

 private:
  Row row_;
  int sample_;
};

Row scenario_row(const Scenario& sc) {
  std::size_t n_blue = 0, n_red = 0;
  for (const auto& a : sc.assets) (a.side == Side::Blue ? n_blue : n_red) += 1;
  return {sc.id,
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
}

/// Adds the calls behind one response of an external policy to the scenario's usage, by (role, policy, model); a
/// count the server did not report adds nothing.
void add_usage(std::vector<ModelUsage>& usage, const Transcript& t, const char* role, const std::string& policy) {
  for (const Transcript::Call& call : t.calls) add_call_usage(usage, role, policy, call.reply);
}

/// One plan per distinct BLUE policy of the conditions (a sweep point's own under its key, RunPlan::Binding), each
/// from the keyed stream of its spec (the sample's): a point plans on its base condition's stream.
std::map<std::string, BlueEval> plan_blues(const Scenario& sc, const RunPlan& plan, int sample, bool& produced_plan,
                                           const geo::GeoMap* map) {
  std::map<std::string, BlueEval> blues;
  for (const auto& c : plan.conditions) {
    const std::string& key = plan.binding(c).blue_key;
    if (blues.contains(key)) continue;
    Rng rng = Rng::keyed(plan.cfg->seed, sc.id, sample_stream("blue/" + c.blue, sample));
    BluePlanResult r;
    try {
      const SerialCall serial = plan.serialise("blue:" + key);
      r = plan.blue(c).plan(sc, rng);
    } catch (const StopRunError&) {
      throw;  // the endpoint refused the key: the run stops, not this row
    } catch (const std::exception& e) {
      r.plan.reset();
      r.failure = fmt::format("BLUE policy {} failed: {}", c.blue, e.what());
    }
    if (r.plan && c.group != "reference") produced_plan = true;
    BlueEval be = eval_blue(std::move(r), sc, plan.cfg->quality);
    if (map != nullptr && be.result.plan) {  // terrain: geo (docs/GEO.md "Plans on the map")
      be.geo = geo_plan_effect(*map, *be.result.plan, Side::Blue);
      be.q = apply_geo(be.q, be.geo, plan.cfg->quality);
    }
    blues.emplace(key, std::move(be));
  }
  return blues;
}

/// What one condition leaves behind besides its rows: the plan outcome, the RED plan's coherence parts and the
/// BLUE plan's (quality, advantage).
struct ConditionResult {
  std::optional<PlanOutcome> outcome;
  std::optional<CoherenceParts> red_parts;
  std::optional<std::pair<double, double>> quality_advantage;
};

/// Candidate diagnostics over the set the RED policy chose among (docs/METRICS.md "Candidate diagnostics").
struct CandidateDiagnostics {
  std::vector<double> qs, ds;
  std::vector<CategorySet> cats;
  int greedy = 0, constraint = 0;
  std::vector<bool> front;
  std::size_t n_front = 0;
};

CandidateDiagnostics diagnose(const RedResponse& resp, double lambda) {
  CandidateDiagnostics d;
  for (const auto& x : resp.candidates) {
    d.qs.push_back(x.q.q);
    d.ds.push_back(x.d->D);
    d.cats.push_back(x.categories);
  }
  d.greedy = select_quality_greedy(d.qs);
  d.constraint = select_constraint_aware(d.qs, d.ds, lambda);
  d.front = pareto_front(d.qs, d.ds);
  for (bool b : d.front) d.n_front += b ? 1 : 0;
  return d;
}

/// The contract statistics and the tokens of a row, ok or failed alike (docs/TRACES.md): a failed row keeps what
/// its calls cost.
void set_contract(RowBuilder& row, const ContractStats& c) {
  row.set("contract_parsed", i2s(c.parsed))
      .set("contract_repaired", i2s(c.repaired))
      .set("contract_failed", i2s(c.failed))
      .set("contract_retries", i2s(c.retries))
      .set("prompt_tokens", c.tokens_reported ? i2s(c.prompt_tokens) : "")
      .set("completion_tokens", c.tokens_reported ? i2s(c.completion_tokens) : "");
}

/// The identifying columns every row of a condition starts with (`sample` -1: a run of one sample).
RowBuilder base_row(const Scenario& sc, const Condition& c, const RedPolicy& red, int sample) {
  RowBuilder row(sample);
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
}

/// Everything one scenario task shares across its conditions.
struct ScenarioTask {
  const Scenario& sc;
  const RunPlan& plan;
  const std::map<std::string, BlueEval>& blues;  // by RunPlan::Binding::blue_key
  const std::vector<const SimNoise*>& noise;     // by RunPlan::sims index: common random numbers across conditions
  CandidateCache& cache;
  ScenarioOutcome& out;
  const geo::GeoMap* map = nullptr;  // terrain: geo
  bool write_plans = false;          // plans.jsonl
  int sample = 0;                    // the sample this task plays (config samples)
  bool sampled = false;              // samples > 1: rows carry the sample column
  bool plans_only = false;           // replay_plans: each condition stops once its RED plan is recorded
  int row_sample() const { return sampled ? sample : -1; }
  /// The wargames played so far, by their forces' bits and the simulator settings. simulate() is a function of
  /// the two forces, the noise and the settings, and the last two are fixed by the settings' index, so conditions
  /// whose RED policies chose the same plan (greedy@4 and greedy@8 often do, and most points of a λ sweep) play it
  /// once; the result is the same bits.
  std::vector<std::pair<std::array<double, 9>, SimResult>> games;
  /// The RED responses given so far, by (RED key, BLUE plan): a sweep point whose settings do not reach its RED
  /// policy takes the response its base condition got instead of asking again (an external policy is not called
  /// twice for one plan, and the point stays paired with its base even when the policy is not reproducible).
  std::vector<std::tuple<std::string, const Plan*, RedResponse>> responses;

  SimResult play(const Force& blue, const Force& red, std::size_t sim) {
    const std::array<double, 9> key{blue.raw, blue.q, blue.D, blue.readiness, red.raw,
                                    red.q,    red.D,  red.readiness, static_cast<double>(sim)};
    for (const auto& [k, r] : games)
      if (std::memcmp(k.data(), key.data(), sizeof key) == 0) return r;
    games.emplace_back(key, simulate(blue, red, *noise[sim], plan.sims[sim]));
    return games.back().second;
  }
};

/// One side's replanning in one cell (docs/POLICIES.md "6. Replanning"). Every decision point the engine brings is a
/// row of replans.csv (docs/TRACES.md): a call (ok or failed; its exchange in transcripts.jsonl), a request the cell
/// already sent (reused: the same answer, no call), or a point past the budget of `replan_calls` calls (budget).
/// A point without a valid plan is left to the default rule.
class CellReplanner final : public Replanner {
 public:
  using Call = std::function<ReplanResult(const nlohmann::json&)>;
  CellReplanner(ScenarioTask& t, const Condition& c, Side side, std::string key, std::string policy, Call call)
      : t_(t), c_(c), side_(side), key_(std::move(key)), policy_(std::move(policy)), call_(std::move(call)),
        left_(t.plan.sims[t.plan.binding(c).sim].engagement.replan_calls) {}

  const Plan* replan(const DecisionPoint& d) override {
    const nlohmann::json request = replan_request(t_.sc, d);
    const std::string text = io::sha256_hex(request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    if (const auto it = answers_.find(text); it != answers_.end()) {
      const Plan* p = it->second < 0 ? nullptr : &plans_[static_cast<std::size_t>(it->second)];
      row(d, "reused", p == nullptr ? "the same request failed before" : "", p, false);
      return p;
    }
    if (!stopped_.empty()) {
      row(d, "stopped", stopped_, nullptr, false);
      return nullptr;
    }
    if (left_ <= 0) {
      row(d, "budget", "the cell's replan_calls are spent", nullptr, false);
      return nullptr;
    }
    --left_;
    ReplanResult r = call_(request);
    if (!r.transcript.calls.empty()) {
      transcript_lines(t_.out.transcripts, r.transcript, t_.plan.cfg->transcripts,
                       {side_ == Side::Blue ? "blue-replan" : "red-replan", key_, t_.sc.id, c_.label, t_.sample},
                       !r.plan);
      add_usage(t_.out.usage, r.transcript, side_ == Side::Blue ? "blue" : "red", key_);
    }
    if (!r.plan) {
      // A failed exchange (timeout, exit, a broken reply line, a transport error) ends the cell's replanning: a
      // broken program costs each cell one call, in any thread order.
      // So do kMaxFailuresInARow failed calls in a row of any kind (invalid plans): a policy that cannot replan
      // this cell does not spend its budget and the traces on it.
      if (!r.transcript.calls.empty() && !r.transcript.calls.back().reply.ok)
        stopped_ = untrusted::excerpt("an earlier call of this cell failed: " + r.failure, kReasonChars);
      else if (++failures_in_a_row_ >= kMaxFailuresInARow)
        stopped_ = untrusted::excerpt(
            fmt::format("{} calls of this cell in a row failed, the last: {}", kMaxFailuresInARow, r.failure),
            kReasonChars);
      answers_.emplace(text, -1);
      row(d, "failed", r.failure, nullptr, false);
      return nullptr;
    }
    failures_in_a_row_ = 0;
    plans_.push_back(std::move(*r.plan));
    answers_.emplace(text, static_cast<long>(plans_.size() - 1));
    row(d, "ok", "", &plans_.back(), true);
    return &plans_.back();
  }

 private:
  void row(const DecisionPoint& d, const char* status, const std::string& reason, const Plan* p, bool with_plan) {
    std::string chain;
    if (p != nullptr)
      for (const auto& id : p->chain) chain += (chain.empty() ? "" : ";") + id;
    t_.out.extra[kReplansFile].push_back({t_.sc.id, c_.label, std::string(to_string(side_)), policy_,
                                          i2s(d.replication), i2s(d.step), d.plan->branches[d.branch].at, status,
                                          untrusted::excerpt(reason, kReasonChars), chain,
                                          with_plan ? plan_to_string(*p) : ""});
  }

  ScenarioTask& t_;
  const Condition& c_;
  Side side_;
  std::string key_, policy_;
  Call call_;
  int left_;
  std::deque<Plan> plans_;                 ///< every revised plan stays where the engine points at it
  std::map<std::string, long> answers_;    ///< the request's sha256 -> index into plans_, -1 when it failed
  std::string stopped_;                    ///< why the cell asks no more ("" while it does)
  int failures_in_a_row_ = 0;
  static constexpr int kMaxFailuresInARow = 3;
};

/// RED's response to `blue` in cell `c`: the one a point with the same RED and BLUE already got (a sweep point that
/// only changes the simulator), or a new call, whose transcript and usage are kept for an external policy.
RedResponse respond_red(ScenarioTask& t, const Condition& c, const Plan& blue) {
  const RunPlan::Binding& bound = t.plan.binding(c);
  const RedPolicy& red = t.plan.red(c);
  RedRequest req = red_request(t.sc, blue, t.plan.ctx_of(c), "baseline");
  req.sample = t.sample;
  const auto given = std::find_if(t.responses.begin(), t.responses.end(), [&](const auto& r) {
    return std::get<0>(r) == bound.red_key && std::get<1>(r) == &blue;
  });
  if (!c.settings.empty() && given != t.responses.end()) return std::get<2>(*given);  // a reused response made no call
  RedResponse resp;
  try {
    const SerialCall serial = t.plan.serialise("red:" + bound.red_key);
    resp = red.respond(req, &t.cache);
  } catch (const StopRunError&) {
    throw;
  } catch (const Error& e) {
    resp.failure = e.what();
    resp.selected = -1;
  }
  if (bound.keep_response && given == t.responses.end()) t.responses.emplace_back(bound.red_key, &blue, resp);
  if (red.info().external) {
    transcript_lines(t.out.transcripts, resp.transcript, t.plan.cfg->transcripts,
                     {"red", bound.red_key, t.sc.id, c.label, t.sample}, resp.chosen() == nullptr);
    add_usage(t.out.usage, resp.transcript, "red", bound.red_key);
  }
  return resp;
}

/// The engagement trace's rows: one per engagement (engagements.csv) and one per cell with every replication's outcome
/// as one character and the means (replications.csv; docs/TRACES.md).
void append_engagement_rows(ScenarioTask& t, const Condition& c, const EngagementTrace& tr) {
  const Scenario& sc = t.sc;
  auto& er = t.out.extra[kEngagementsFile];
  for (const EngagementRow& e : tr.engagements)
    er.push_back({sc.id, c.label, i2s(e.replication), i2s(e.start), i2s(e.end), e.blue_assets, e.red_assets, e.where,
                  fmt_real(e.blue_share), fmt_real(e.red_share), fmt_real(e.blue_before), fmt_real(e.blue_after),
                  fmt_real(e.red_before), fmt_real(e.red_after)});
  std::string won(tr.outcomes.size(), '0');
  int wins = 0;
  double loss_b = 0, loss_r = 0, steps = 0;
  std::map<std::string, int> branches;
  for (const ReplicationOutcome& o : tr.outcomes) {
    won[static_cast<std::size_t>(o.replication)] = o.blue_won ? '1' : '0';
    wins += o.blue_won ? 1 : 0;
    loss_b += o.blue_loss;
    loss_r += o.red_loss;
    steps += o.steps;
    if (!o.blue_branches.empty()) ++branches["BLUE " + o.blue_branches];
    if (!o.red_branches.empty()) ++branches["RED " + o.red_branches];
  }
  std::string choices;
  for (const auto& [k, n] : branches) choices += (choices.empty() ? "" : " | ") + k + " x" + std::to_string(n);
  const double n = tr.outcomes.empty() ? 1.0 : static_cast<double>(tr.outcomes.size());
  t.out.extra[kReplicationsFile].push_back({sc.id, c.label, i2s(static_cast<long long>(tr.outcomes.size())), i2s(wins),
                                            won, fmt_real(loss_b / n), fmt_real(loss_r / n), fmt_real(steps / n),
                                            choices});
}

/// The two plans played step by step (docs/METRICS.md "Engagement wargame"), on the map when there is one, with
/// replanning at the decision points for a policy that declares it (serialised like its planning calls).
SimResult play_engagement(ScenarioTask& t, const Condition& c, const BlueEval& be, const Plan& blue,
                          const RedCandidate& rc, const GeoPlanEffect& rg, Force& fb, Force& fr) {
  const RunPlan::Binding& bound = t.plan.binding(c);
  const RedPolicy& red = t.plan.red(c);
  const Scenario& sc = t.sc;
  EngagementTrace tr;
  std::optional<PlanOnMap> bm, rm;
  if (t.map != nullptr) {  // the moves take their routes' time and exposure, which stand in for readiness
    bm = plan_on_map(*t.map, be.geo);
    rm = plan_on_map(*t.map, rg);
    fb.readiness = fr.readiness = 1.0;
  }
  std::optional<CellReplanner> brp, rrp;
  const BluePolicy& bp = t.plan.blue(c);
  if (bp.replans())
    brp.emplace(t, c, Side::Blue, bound.blue_key, c.blue, [&](const nlohmann::json& q) {
      const SerialCall serial = t.plan.serialise("blue:" + bound.blue_key);
      return bp.replan(sc, q);
    });
  if (red.replans())
    rrp.emplace(t, c, Side::Red, bound.red_key, c.red, [&](const nlohmann::json& q) {
      const SerialCall serial = t.plan.serialise("red:" + bound.red_key);
      return red.replan(sc, q);
    });
  const SimResult sim =
      simulate_engagement(sc, blue, fb, rc.plan, fr, *t.noise[bound.sim], t.plan.sims[bound.sim], &tr,
                          kTracedReplications,
                          {bm ? &*bm : nullptr, rm ? &*rm : nullptr, brp ? &*brp : nullptr, rrp ? &*rrp : nullptr});
  append_engagement_rows(t, c, tr);
  return sim;
}

/// What an ok row says besides the base columns and the contract (docs/TRACES.md "per_scenario.csv").
struct OkCell {
  const BlueEval& be;
  const Plan& blue;
  const RedCandidate& rc;
  const QualityParts& red_q;
  const CandidateDiagnostics& d;
  const RedResponse& resp;
  const SimResult& sim;
  const Force& fb;
  const Force& fr;
};

void set_ok_columns(RowBuilder& row, const OkCell& x) {
  const auto g = static_cast<std::size_t>(x.d.greedy), cd = static_cast<std::size_t>(x.d.constraint);
  row.set("status", "ok")
      .set("blue_plan_id", x.blue.plan_id)
      .set("red_plan_id", x.rc.plan.plan_id)
      .set("blue_quality", x.be.q.q)
      .set("blue_e", x.be.q.e)
      .set("blue_c", x.be.q.c)
      .set("blue_r", x.be.q.r)
      .set("blue_coherence", x.be.d.D)
      .set("red_quality", x.red_q.q)
      .set("red_coherence", x.rc.d->D)
      .set("advantage", advantage(x.be.q.q, x.red_q.q))
      .set("nash_gap", nash_gap(x.be.q.q, x.red_q.q))
      .set("blue_win_rate", x.sim.win_rate)
      .set("blue_final_strength", x.sim.blue_final)
      .set("red_final_strength", x.sim.red_final)
      .set("diversity", action_type_diversity(x.d.cats))
      .set("quality_spread", quality_spread(x.d.qs))
      .set("pareto_count", i2s(static_cast<long long>(x.d.n_front)))
      .set("changed_choice", i2s(g != cd ? 1 : 0))
      .set("quality_regret", x.d.qs[g] - x.d.qs[cd])
      .set("structural_gain", x.d.ds[cd] - x.d.ds[g])
      .set("blue_O", x.be.st.O)
      .set("blue_PV", x.be.st.P_V)
      .set("blue_W", x.be.st.W)
      .set("red_pressure", x.rc.pressure.magnitude)
      .set("red_pressure_category", std::string(to_string(x.rc.pressure.category)))
      .set("candidates_valid", i2s(static_cast<long long>(x.resp.candidates.size())))
      .set("candidates_dropped", i2s(x.resp.dropped))
      .set("blue_raw_capability", x.fb.raw)
      .set("red_raw_capability", x.fr.raw)
      .set("blue_effective_power", effective_power(x.fb))
      .set("red_effective_power", effective_power(x.fr));
}

/// A candidate's raw capability as score_red_plan computed it (the same function), else computed here.
double raw_of(const RedCandidate& x, const Scenario& sc) {
  return x.raw_capability ? *x.raw_capability : raw_capability(x.plan, sc);
}

/// RED's candidates of the cell (candidates.csv), and with traces.candidate_plans their plans.
void append_candidates(ScenarioTask& t, const Condition& c, const RedResponse& resp, const CandidateDiagnostics& d) {
  const RedPolicy& red = t.plan.red(c);
  const auto g = static_cast<std::size_t>(d.greedy), cd = static_cast<std::size_t>(d.constraint);
  for (std::size_t i = 0; i < resp.candidates.size(); ++i) {
    const auto& x = resp.candidates[i];
    Row& cand = t.out.candidates.emplace_back(
        Row{t.sc.id, c.label, i2s(red.k()), i2s(x.index), x.plan.plan_id, fmt_real(x.q.q), fmt_real(x.d->D),
            fmt_real(x.pressure.magnitude), std::string(to_string(x.pressure.category)), d.front[i] ? "1" : "0",
            i == g ? "1" : "0", i == cd ? "1" : "0", static_cast<int>(i) == resp.selected ? "1" : "0",
            format_category_set(x.categories), fmt_real(x.q.c), fmt_real(raw_of(x, t.sc))});
    if (t.sampled)
      cand.insert(cand.begin() + static_cast<std::ptrdiff_t>(schema::sample_column_candidates()), i2s(t.sample));
    if (!t.plan.cfg->candidate_plans) continue;
    nlohmann::ordered_json j;
    j["scenario_id"] = t.sc.id;
    j["condition"] = c.label;
    if (t.sampled) j["sample"] = t.sample;
    j["index"] = x.index;
    j["k"] = red.k();
    j["plan_id"] = x.plan.plan_id;
    j["selected"] = static_cast<int>(i) == resp.selected;
    j["plan"] = to_json(x.plan);
    t.out.candidate_plans.push_back(j.dump());
  }
}

ConditionResult evaluate_condition(ScenarioTask& t, const Condition& c) {
  const Scenario& sc = t.sc;
  const RunPlan::Binding& bound = t.plan.binding(c);
  const BlueEval& be = t.blues.at(bound.blue_key);
  RowBuilder row = base_row(sc, c, t.plan.red(c), t.row_sample());
  // A failed row carries the statistics and tokens of every call behind it: BLUE's, and RED's once RED was asked.
  auto fail = [&](const std::string& why, const ContractStats& contract) {
    row.set("status", "failed").set("failure_reason", why);
    set_contract(row, contract);
    t.out.per_scenario.push_back(row.take());
    ++t.out.failed_rows;
    return ConditionResult{};
  };
  if (!be.result.plan) return fail("blue: " + be.result.failure, be.result.contract);
  const Plan& blue = *be.result.plan;
  const RedResponse resp = respond_red(t, c, blue);
  ContractStats contract = be.result.contract;
  contract += resp.contract;
  const RedCandidate* rc = resp.chosen();
  if (t.write_plans)
    t.out.plans.push_back(
        played_plan_line(sc.id, c.label, t.sample, Side::Red, c.red, rc ? &rc->plan : nullptr, resp.failure));
  if (t.plans_only) return {};
  if (!rc) return fail("red: " + resp.failure, contract);

  const CandidateDiagnostics d = diagnose(resp, bound.lambda);
  QualityParts red_q = rc->q;
  Force fb{be.raw, be.q.q, be.d.D};
  Force fr{raw_of(*rc, sc), rc->q.q, rc->d->D};
  GeoPlanEffect rg;
  if (t.map != nullptr) {  // terrain: geo: the chosen RED plan on the map, and both sides' readiness
    rg = geo_plan_effect(*t.map, rc->plan, Side::Red);
    red_q = apply_geo(rc->q, rg, t.plan.cfg->quality);
    fr.q = red_q.q;
    fb.readiness = be.geo.readiness;
    fr.readiness = rg.readiness;
    auto& rows = t.out.extra[kGeoMovesFile];
    append_geo_rows(rows, sc.id, c.label, Side::Blue, blue.plan_id, be.geo);
    append_geo_rows(rows, sc.id, c.label, Side::Red, rc->plan.plan_id, rg);
  }
  const SimResult sim = t.plan.sims[bound.sim].model == "engagement" ? play_engagement(t, c, be, blue, *rc, rg, fb, fr)
                                                                     : t.play(fb, fr, bound.sim);
  set_ok_columns(row, OkCell{be, blue, *rc, red_q, d, resp, sim, fb, fr});
  set_contract(row, contract);
  t.out.per_scenario.push_back(row.take());
  append_candidates(t, c, resp, d);
  const double adv = advantage(be.q.q, red_q.q);
  return {PlanOutcome{rc->plan.plan_id, adv, be.d.D, rc->d->D, sim.win_rate}, rc->d, std::pair{be.q.q, adv}};
}

/// Runs evaluate_condition; a condition that throws leaves a failure row instead of partial rows.
ConditionResult evaluate_condition_guarded(ScenarioTask& t, const Condition& c) {
  const std::size_t rows_before = t.out.per_scenario.size(), cand_before = t.out.candidates.size(),
                    plans_before = t.out.candidate_plans.size(), transcripts_before = t.out.transcripts.size(),
                    kept_plans_before = t.out.plans.size();
  std::map<std::string, std::size_t> extra_before;  // the run-level extra files' rows (geo moves, engagements)
  for (const char* f : {kGeoMovesFile, kEngagementsFile, kReplicationsFile, kReplansFile})
    if (const auto it = t.out.extra.find(f); it != t.out.extra.end()) extra_before[f] = it->second.size();
  try {
    return evaluate_condition(t, c);
  } catch (const StopRunError&) {
    throw;
  } catch (const std::exception& e) {
    t.out.per_scenario.resize(rows_before);
    t.out.candidates.resize(cand_before);
    t.out.candidate_plans.resize(plans_before);
    t.out.transcripts.resize(transcripts_before);
    t.out.plans.resize(kept_plans_before);
    for (const char* f : {kGeoMovesFile, kEngagementsFile, kReplicationsFile, kReplansFile})
      if (auto it = t.out.extra.find(f); it != t.out.extra.end()) it->second.resize(extra_before[f]);
    RowBuilder row = base_row(t.sc, c, t.plan.red(c), t.row_sample());
    row.set("status", "failed").set("failure_reason", fmt::format("internal error: {}", e.what()));
    t.out.per_scenario.push_back(row.take());
    ++t.out.failed_rows;
    return {};
  }
}

}  // namespace

namespace {

/// Sample `sample` of one scenario: every condition's rows, plans and transcripts into `out`; sample 0 also
/// leaves what the observers read (played, blue_plans) and the BLUE policies' own trace rows.
void evaluate_sample(const Scenario& sc, const RunPlan& plan, int sample, const std::vector<const SimNoise*>& noise,
                     const geo::GeoMap* map, ScenarioOutcome& out, bool plans_only = false) {
  auto blues = plan_blues(sc, plan, sample, out.produced_plan, map);
  const bool write_plans = plans_only || records_plans(plan);
  // The BLUE policies' calls first, in the order the conditions first name the policies; then each condition's RED.
  // plans.jsonl keeps the BLUE plans of the policies the conditions name (a sweep point's own BLUE plans are not
  // kept: docs/TRACES.md "plans.jsonl"); transcripts.jsonl records every call, a point's under its key.
  {
    std::set<std::string> seen;
    for (const auto& c : plan.conditions) {
      const std::string& key = plan.binding(c).blue_key;
      if (!seen.insert(key).second) continue;
      const BluePlanResult& r = blues.at(key).result;
      if (write_plans && key == c.blue)
        out.plans.push_back(
            played_plan_line(sc.id, "", sample, Side::Blue, c.blue, r.plan ? &*r.plan : nullptr, r.failure));
      if (plan.blue(c).info().external) {
        transcript_lines(out.transcripts, r.transcript, plan.cfg->transcripts, {"blue", key, sc.id, "", sample},
                         !r.plan.has_value());
        add_usage(out.usage, r.transcript, "blue", key);
      }
    }
  }
  // One RED request per condition answers its BLUE policy's plan: the cache moves a plan's candidates out in the
  // last of them instead of copying.
  std::map<const Plan*, int> requests;
  for (const auto& c : plan.conditions)
    if (const auto& p = blues.at(plan.binding(c).blue_key).result.plan) ++requests[&*p];
  CandidateCache cache(std::move(requests));
  ScenarioTask task{sc, plan, blues, noise, cache, out, map, write_plans, sample, plan.cfg->samples > 1, plans_only};

  std::map<std::string, ConditionResult> results;                // by condition label
  std::map<std::string, std::optional<PlanOutcome>> first_outcome;  // by BLUE key: its first RED result
  for (const auto& c : plan.conditions) {
    ConditionResult r = evaluate_condition_guarded(task, c);
    auto& first = first_outcome[plan.binding(c).blue_key];
    if (!first && r.outcome) first = r.outcome;
    results.emplace(c.label, std::move(r));
  }
  if (sample != 0 || plans_only) return;  // prepare_run refuses samples > 1 with a policy that writes its own traces
  // Policies that trace their own process (the council) add their rows through the generic hook; a sweep point's
  // own BLUE policy does not (its rows would have no point to tell them apart: docs/DECISIONS.md "Sweeps").
  for (const auto& [spec, be] : blues) {
    if (!plan.blues.contains(spec)) continue;
    const BluePolicy& policy = *plan.blues.at(spec);
    if (policy.info().traces.empty()) continue;
    const auto& first = first_outcome[spec];
    policy.trace_rows(sc, be.result, first ? &*first : nullptr, out.extra);
  }
  // What the observers read: every condition's outcome, then the plans, moved out now that the rows are made.
  out.played.reserve(plan.conditions.size());
  for (const auto& c : plan.conditions) {
    ScenarioOutcome::Played p;
    p.condition = &c;
    if (const BlueEval& be = blues.at(plan.binding(c).blue_key); be.result.plan) p.blue_parts = be.d;
    if (auto it = results.find(c.label); it != results.end()) {
      p.red_parts = it->second.red_parts;
      p.quality_advantage = it->second.quality_advantage;
    }
    out.played.push_back(std::move(p));
  }
  for (const auto& c : plan.conditions)
    if (auto it = blues.find(c.blue); it != blues.end()) {  // each BLUE policy once, where it is first named
      out.blue_plans.emplace_back(c.blue, std::move(it->second.result.plan));  // (a point's own are not kept)
      blues.erase(it);
    }
}

}  // namespace

ScenarioOutcome evaluate_scenario(const Scenario& sc, const RunPlan& plan) {
  ScenarioOutcome out;
  out.scenario_row = scenario_row(sc);
  std::optional<geo::GeoMap> map;
  if (plan.cfg->terrain_geo) map = scenario_map(*plan.cfg, sc);
  // The wargame's noise is common to every condition and every sample of the scenario (common random numbers):
  // samples differ in what the policies answer, not in the dice (docs/METRICS.md "Samples").
  // A sweep point with its own replications or time limit draws its own, from the same streams: the first R
  // replications and T steps are the same draws whatever R and T are.
  std::vector<SimNoise> drawn;
  std::vector<std::pair<int, int>> shapes;
  std::vector<std::size_t> which(plan.sims.size());
  for (std::size_t i = 0; i < plan.sims.size(); ++i) {
    const std::pair<int, int> shape{plan.sims[i].replications, plan.sims[i].time_limit};
    const auto it = std::find(shapes.begin(), shapes.end(), shape);
    which[i] = static_cast<std::size_t>(it - shapes.begin());
    if (it == shapes.end()) {
      shapes.push_back(shape);
      drawn.push_back(draw_noise(plan.cfg->seed, sc.id, plan.sims[i]));
    }
  }
  std::vector<const SimNoise*> noise;
  for (std::size_t i = 0; i < plan.sims.size(); ++i) noise.push_back(&drawn[which[i]]);
  for (int s = 0; s < plan.cfg->samples; ++s) evaluate_sample(sc, plan, s, noise, map ? &*map : nullptr, out);
  return out;
}

std::vector<std::string> replay_plans(const Scenario& sc, const RunPlan& plan) {
  ScenarioOutcome out;
  const std::vector<const SimNoise*> noise;  // no wargame is played
  for (int s = 0; s < plan.cfg->samples; ++s) evaluate_sample(sc, plan, s, noise, nullptr, out, true);
  return std::move(out.plans);
}

bool has_external_policy(const RunPlan& plan) {
  for (const auto& [name, p] : plan.blues)
    if (p->info().external) return true;
  for (const auto& [name, p] : plan.reds)
    if (p->info().external) return true;
  return false;
}

bool records_plans(const RunPlan& plan) { return plan.cfg->plans ? *plan.cfg->plans : has_external_policy(plan); }

void add_usage(std::vector<ModelUsage>& total, const ModelUsage& u) {
  auto it = std::find_if(total.begin(), total.end(), [&](const ModelUsage& t) {
    return t.role == u.role && t.policy == u.policy && t.model == u.model && t.batch == u.batch;
  });
  if (it == total.end()) {
    total.push_back(u);
    return;
  }
  it->calls += u.calls;
  it->prompt_tokens += u.prompt_tokens;
  it->completion_tokens += u.completion_tokens;
  it->cached_tokens += u.cached_tokens;
  it->cache_write_tokens += u.cache_write_tokens;
  it->deferred += u.deferred;
}

void add_call_usage(std::vector<ModelUsage>& total, const char* role, const std::string& policy, const Completion& reply) {
  const auto n = [](int v) { return static_cast<std::uint64_t>(std::max(0, v)); };
  if (reply.error_kind == ErrorKind::deferred) {
    ModelUsage u{role, policy, reply.model};
    u.deferred = 1;
    add_usage(total, u);
    return;
  }
  add_usage(total, ModelUsage{role, policy, reply.model, 1, n(reply.prompt_tokens), n(reply.completion_tokens),
                              n(reply.cached_tokens), n(reply.cache_write_tokens), reply.batch});
}

}  // namespace advplan
