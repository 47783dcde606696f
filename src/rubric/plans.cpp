#include "advplan/rubric/plans.hpp"


#include <fmt/format.h>

#include <optional>
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "advplan/core/error.hpp"
#include "advplan/core/random.hpp"
#include "advplan/stats/statistics.hpp"
#include "advplan/run/config.hpp"
#include "advplan/rubric/canaries.hpp"
#include "advplan/rubric/judge.hpp"
#include "advplan/io/played_plans.hpp"
#include "advplan/run/transcripts.hpp"
#include "advplan/run/runner.hpp"
#include "advplan/run/scenario_eval.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/metrics/coherence.hpp"
#include "advplan/metrics/quality.hpp"
#include "advplan/metrics/rubric.hpp"
#include "rubric/jsonl.hpp"
#include "core/json_text.hpp"

namespace advplan::rubric {
namespace {

/// Most exposed steps of the reference chain that get an item each.
constexpr std::size_t kMaxExposedItems = 3;
/// A validator judge is stricter on items of the coherence parts it emphasises (a positive item also needs the
/// part's sub-score >= kStrict; a mistake is also charged when the sub-score is below it) and looser elsewhere (a
/// positive item also passes when the sub-score is >= kLoose; a mistake is charged only when the sub-score is
/// below it as well).
constexpr double kStrict = 0.5;
constexpr double kLoose = 0.75;

struct KindSpec {
  const char* kind;
  Severity severity;
  int tier;
  CoherencePart part;
};
const KindSpec kKinds[] = {
    {"objective_names_target", Severity::I, 1, CoherencePart::objective_clarity},
    {"exposed_steps_covered", Severity::CI, 2, CoherencePart::risk_mitigation},
    {"information_before_exposure", Severity::I, 2, CoherencePart::information_preparation},
    {"fires_before_information", Severity::CD, 2, CoherencePart::information_preparation},
    {"sustainment_present", Severity::SI, 1, CoherencePart::sustainment},
    {"branch_contingency", Severity::SI, 3, CoherencePart::risk_mitigation},
    {"single_asset_overload", Severity::D, 3, CoherencePart::resource_balance},
    {"civil_engaged", Severity::I, 2, CoherencePart::objective_clarity},
};

const KindSpec& kind_spec(std::string_view kind) {
  for (const auto& k : kKinds)
    if (kind == k.kind) return k;
  throw Error(fmt::format("rubric: unknown item kind '{}'", kind));
}

std::string kind_of(const RubricItem& it) { return it.item_id.substr(0, it.item_id.find('@')); }

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

/// The chain's actions in order (ids that name no action are skipped).
std::vector<const Action*> chain_of(const Plan& p) {
  std::vector<const Action*> out;
  for (const auto& id : p.chain)
    if (const int i = p.find_action(id); i >= 0) out.push_back(&p.actions[static_cast<std::size_t>(i)]);
  return out;
}

bool has_category(const Plan& p, std::initializer_list<Category> cats) {
  return std::any_of(p.actions.begin(), p.actions.end(), [&](const Action& a) {
    return std::find(cats.begin(), cats.end(), a.category) != cats.end();
  });
}

/// Index of the first chain step satisfying `pred`, or the chain's length.
template <class Pred>
std::size_t first_step(const std::vector<const Action*>& chain, Pred pred) {
  for (std::size_t i = 0; i < chain.size(); ++i)
    if (pred(*chain[i])) return i;
  return chain.size();
}

/// The exact check of one item; `chain` is chain_of(plan).
bool exact_check(const RubricItem& it, const Plan& plan, const Scenario& sc, const std::vector<const Action*>& chain) {
  const std::string kind = kind_of(it);
  const auto exposed = [&](const Action& a) { return is_exposed(a.category, sc); };
  const auto is = [](Category c) { return [c](const Action& a) { return a.category == c; }; };
  if (kind == "objective_names_target") {
    const std::string obj = lower(plan.objective), scen = lower(sc.blue_objective);
    bool any_target = false;
    for (const auto& place : sc.places)
      if (scen.find(lower(place)) != std::string::npos) {
        any_target = true;
        if (obj.find(lower(place)) != std::string::npos) return true;
      }
    if (!any_target)
      for (const auto& place : sc.places)
        if (obj.find(lower(place)) != std::string::npos) return true;
    return false;
  }
  if (kind == "exposed_steps_covered") {
    const std::size_t pos = std::stoul(it.item_id.substr(it.item_id.find('@') + 1));  // 1-based
    if (pos > chain.size() || !exposed(*chain[pos - 1])) return true;  // nothing exposed there to cover
    for (std::size_t i = 0; i + 1 < pos; ++i)
      if (chain[i]->category == Category::protection || chain[i]->category == Category::deception) return true;
    return false;
  }
  if (kind == "information_before_exposure") {
    const std::size_t first_exposed = first_step(chain, exposed);
    return first_exposed == chain.size() || first_step(chain, is(Category::information)) < first_exposed;
  }
  if (kind == "fires_before_information") {
    const std::size_t fires = first_step(chain, is(Category::fires));
    return fires < chain.size() && first_step(chain, is(Category::information)) > fires;
  }
  if (kind == "sustainment_present") return has_category(plan, {Category::sustainment});
  if (kind == "branch_contingency") return !plan.branches.empty();
  if (kind == "single_asset_overload") {
    if (chain.size() < 3) return false;
    std::map<std::string, std::size_t> per_asset;
    for (const auto* a : chain) ++per_asset[a->asset];
    for (const auto& [asset, n] : per_asset)
      if (2 * n > chain.size()) return true;
    return false;
  }
  if (kind == "civil_engaged") return has_category(plan, {Category::civil, Category::public_information});
  throw Error(fmt::format("rubric: unknown item kind '{}'", kind));
}

}  // namespace

std::vector<RubricItem> plan_rubric_items(const Scenario& sc, const std::vector<std::string>& kinds) {
  std::vector<RubricItem> out;
  auto make = [&](const KindSpec& k, std::string id, std::string step, std::string q, std::string pass, std::string fail) {
    RubricItem it;
    it.case_id = sc.id;
    it.item_id = std::move(id);
    it.step = std::move(step);
    it.tier = k.tier;
    it.severity = k.severity;
    it.question = std::move(q);
    it.pass_condition = std::move(pass);
    it.fail_condition = std::move(fail);
    out.push_back(std::move(it));
  };
  std::vector<std::string> targets;
  for (const auto& p : sc.places)
    if (lower(sc.blue_objective).find(lower(p)) != std::string::npos) targets.push_back(p);
  for (const auto& kind : kinds) {
    const KindSpec& k = kind_spec(kind);
    if (kind == "objective_names_target") {
      std::string t;
      for (const auto& p : targets) t += (t.empty() ? "" : " or ") + ("'" + p + "'");
      make(k, kind, "objective", fmt::format("Does the plan's objective name the target ({})?", t.empty() ? "a place of the scenario" : t),
           "The objective names the target.", "The objective names no target of the scenario.");
    } else if (kind == "exposed_steps_covered") {
      // Positions of the exposed steps of the scenario's reference plan (its first seed plan).
      if (sc.blue_seed_plans.empty()) continue;
      const auto chain = chain_of(sc.blue_seed_plans.front());
      std::size_t made = 0;
      for (std::size_t i = 0; i < chain.size() && made < kMaxExposedItems; ++i) {
        if (!is_exposed(chain[i]->category, sc)) continue;
        ++made;
        const std::string cat(to_string(chain[i]->category));
        make(k, fmt::format("{}@{}", kind, i + 1), fmt::format("chain:{}", i + 1),
             fmt::format("Is the exposed {} step at position {} covered by a protection or deception action?", cat, i + 1),
             fmt::format("Step {} is not exposed, or a protection or deception action precedes it in the chain.", i + 1),
             fmt::format("Step {} is exposed and nothing before it protects or deceives.", i + 1));
      }
    } else if (kind == "information_before_exposure") {
      make(k, kind, "sequencing", "Does an information action precede the first exposed step?",
           "An information action comes before the first exposed step (or no step is exposed).",
           "The first exposed step comes before any information action.");
    } else if (kind == "fires_before_information") {
      make(k, kind, "sequencing", "Are fires committed before any information action?",
           "A fires step comes before any information step of the chain.",
           "No fires, or information comes first.");
    } else if (kind == "sustainment_present") {
      make(k, kind, "sustainment", "Does the plan sustain itself?", "The plan has a sustainment action.",
           "The plan has no sustainment action.");
    } else if (kind == "branch_contingency") {
      make(k, kind, "branches", "Does the plan prepare a contingency?", "The plan has a conditional branch.",
           "The plan has no branch.");
    } else if (kind == "single_asset_overload") {
      make(k, kind, "resources", "Does one asset carry most of the chain?",
           "One asset performs more than half of a chain of three or more steps.", "The chain is shared.");
    } else if (kind == "civil_engaged") {
      make(k, kind, "civil", "Does the plan engage the population?",
           "The plan has a civil or public-information action.", "It has neither.");
    }
  }
  return out;
}

CoherencePart coherence_part_of(const RubricItem& item) { return kind_spec(kind_of(item)).part; }

const std::vector<std::string>& rule_judges() {
  static const std::vector<std::string> judges = [] {
    std::vector<std::string> j{"exact"};
    for (const auto& v : rubric_validators())
      if (v.name != "base") j.push_back(v.name);
    return j;
  }();
  return judges;
}

std::vector<bool> judge_plan(const std::string& judge, std::span<const RubricItem> items, const Plan& plan,
                             const Scenario& sc) {
  return judge_plan_all({judge}, items, plan, sc).front();
}

std::vector<std::vector<bool>> judge_plan_all(const std::vector<std::string>& judges, std::span<const RubricItem> items,
                                              const Plan& plan, const Scenario& sc) {
  // The validator of each judge, checked first (an unknown judge is an error before any work).
  std::vector<const RubricValidator*> validators(judges.size(), nullptr);
  for (std::size_t j = 0; j < judges.size(); ++j) {
    if (judges[j] == "exact") continue;
    for (const auto& x : rubric_validators())
      if (x.name == judges[j] && x.name != "base") validators[j] = &x;
    if (!validators[j]) throw Error(fmt::format("rubric: unknown judge '{}'", judges[j]));
  }
  // The exact checks and the coherence parts are the same for every judge: computed once.
  const auto chain = chain_of(plan);
  std::vector<bool> exact(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) exact[i] = exact_check(items[i], plan, sc, chain);
  const bool any_validator = std::any_of(validators.begin(), validators.end(), [](const auto* v) { return v; });
  const CoherenceParts parts = any_validator ? coherence(plan, sc) : CoherenceParts{};
  std::vector<std::vector<bool>> out(judges.size(), exact);
  for (std::size_t j = 0; j < judges.size(); ++j) {
    const RubricValidator* v = validators[j];
    if (!v) continue;
    for (std::size_t i = 0; i < items.size(); ++i) {
      const CoherencePart part = kind_spec(kind_of(items[i])).part;
      const double sub = parts[part];
      const bool emphasised = v->weights[static_cast<std::size_t>(part)] > 1.0;
      if (items[i].negative()) out[j][i] = emphasised ? (exact[i] || sub < kStrict) : (exact[i] && sub < kLoose);
      else out[j][i] = emphasised ? (exact[i] && sub >= kStrict) : (exact[i] || sub >= kLoose);
    }
  }
  return out;
}

bool rubric_layer_enabled(const ExperimentConfig& cfg) {
  if (!cfg.studies.rubric) return false;
  for (const auto& t : cfg.templates)
    if (!t.rubric_items.empty()) return true;
  return false;
}

bool rubric_grades_blue(const BluePolicy& policy, bool kept) { return kept || !policy.info().external; }

namespace detail {

void append_item_line(std::string& out, std::string_view case_id, const RubricItem& it) {
  namespace jt = json_text;
  out.push_back('{');
  jt::key(out, "case_id");
  jt::string(out, case_id);
  out.push_back(',');
  jt::key(out, "fail_condition");
  jt::string(out, it.fail_condition);
  out.push_back(',');
  jt::key(out, "item_id");
  jt::string(out, it.item_id);
  out.push_back(',');
  jt::key(out, "pass_condition");
  jt::string(out, it.pass_condition);
  out.push_back(',');
  jt::key(out, "polarity");
  jt::string(out, it.negative() ? "negative" : "positive");
  out.push_back(',');
  jt::key(out, "question");
  jt::string(out, it.question);
  out.push_back(',');
  jt::key(out, "severity");
  jt::string(out, severity_code(it.severity));
  out.push_back(',');
  jt::key(out, "step");
  jt::string(out, it.step);
  out.push_back(',');
  jt::key(out, "tier");
  jt::integer(out, it.tier);
  out.push_back(',');
  jt::key(out, "weight");
  jt::integer(out, static_cast<int>(it.weight()));
  out.append("}\n");
}

void append_rule_verdict_line(std::string& out, const Verdict& v) {
  namespace jt = json_text;
  out.push_back('{');
  jt::key(out, "brief_id");
  jt::string(out, v.brief_id);
  out.push_back(',');
  jt::key(out, "case_id");
  jt::string(out, v.case_id);
  out.push_back(',');
  jt::key(out, "error");
  jt::boolean(out, v.error);
  out.push_back(',');
  jt::key(out, "failed_items");
  jt::strings(out, v.failed_items);
  out.push_back(',');
  jt::key(out, "failures");
  out.append("[]");
  out.push_back(',');
  jt::key(out, "group");
  jt::string(out, v.group);
  out.push_back(',');
  jt::key(out, "judge");
  jt::string(out, v.judge);
  out.push_back(',');
  jt::key(out, "model");
  jt::string(out, v.model);
  out.push_back(',');
  jt::key(out, "unknown_ids");
  jt::strings(out, v.unknown_ids);
  out.append("}\n");
}

}  // namespace detail

namespace {

/// (spec, policy); the policy is null when the plans come from a finished run's plans.jsonl (regrade_files).
using GradedBlues = std::vector<std::pair<std::string, const BluePolicy*>>;

/// The LLM judges' clients; one that cannot be made (no endpoint) fails on every plan, with the reason.
struct JudgeClients {
  std::vector<std::unique_ptr<CompletionClient>> clients;
  std::vector<std::string> setup_error;
};
/// `no_endpoint`: when set, a live judge without an endpoint is told this instead of the client's own sentence.
JudgeClients make_judge_clients(const RunPlan& plan, const std::string& no_endpoint) {
  const ExperimentConfig& cfg = *plan.cfg;
  const std::vector<std::string>& llm_judges = cfg.rubric.judges;
  JudgeClients out;
  out.clients.resize(llm_judges.size());
  out.setup_error.resize(llm_judges.size());
  const char* env_endpoint = std::getenv("ADVPLAN_LLM_ENDPOINT");
  const bool endpoint = !cfg.llm.endpoint.empty() || (env_endpoint != nullptr && *env_endpoint != '\0');
  for (std::size_t j = 0; j < llm_judges.size(); ++j) try {
      if (!no_endpoint.empty() && !endpoint && llm_judges[j] != "llm_judge_offline")
        throw PolicyError(fmt::format("{}: no endpoint: {}", llm_judges[j], no_endpoint));
      out.clients[j] = make_judge_client(llm_judges[j], cfg.llm, plan.ctx);
    } catch (const Error& e) {
      out.setup_error[j] = e.what();
      fmt::print(stderr, "advplan: warning: rubric judge {}: {}\n", llm_judges[j], e.what());
    }
  return out;
}

/// Per scenario: its items and, per BLUE policy, its plan (or nothing), the rule judges' item verdicts and each
/// LLM judge's outcome.
struct Graded {
  std::vector<std::vector<RubricItem>> items;
  std::vector<std::vector<std::optional<Plan>>> plans;
  std::vector<std::vector<std::vector<JudgeOutcome>>> outcomes;
  std::vector<std::vector<std::vector<std::vector<bool>>>> ruled;  ///< [scenario][BLUE policy][rule judge]
};

/// Whether a judge asks a model (the offline stand-in answers in the process, at once).
bool is_live_judge(const std::string& judge) { return judge != "llm_judge_offline"; }

/// The plans the live judges failed on in one scenario (outcomes [BLUE policy][judge]); each failure goes to
/// `progress`, which prints it when its cause is new.
std::size_t judge_failures(const std::vector<std::vector<JudgeOutcome>>& outcomes, const std::vector<std::string>& judges,
                           const std::string& scenario, Progress& progress) {
  std::size_t failed = 0;
  for (const auto& per_blue : outcomes)
    for (std::size_t j = 0; j < judges.size(); ++j)
      if (is_live_judge(judges[j]) && !per_blue[j].ok && per_blue[j].reason != "no plan to judge") {
        ++failed;
        progress.failure(scenario, judges[j], per_blue[j].reason);
      }
  return failed;
}

/// Grades every scenario's BLUE plans, the scenarios in parallel.
Graded grade_corpus(const RunPlan& plan, const std::vector<Scenario>& corpus,
                    std::map<std::string, std::vector<std::string>>& kinds, const GradedBlues& blues,
                    KeptBluePlans* kept_plans, const JudgeClients& judges, ProgressMode mode) {
  const ExperimentConfig& cfg = *plan.cfg;
  const std::vector<std::string>& llm_judges = cfg.rubric.judges;
  const std::vector<std::string>& rules = rule_judges();
  Graded g;
  g.items.resize(corpus.size());
  g.plans.assign(corpus.size(), std::vector<std::optional<Plan>>(blues.size()));
  g.outcomes.assign(corpus.size(), std::vector<std::vector<JudgeOutcome>>(blues.size(),
                                                                          std::vector<JudgeOutcome>(llm_judges.size())));
  // The rule judges' item verdicts, made in the same parallel loop.
  g.ruled.assign(corpus.size(),
                 std::vector<std::vector<std::vector<bool>>>(blues.size(), std::vector<std::vector<bool>>(rules.size())));
  auto& items = g.items;
  auto& plans = g.plans;
  auto& outcomes = g.outcomes;
  auto& ruled = g.ruled;
  const auto& judge_clients = judges.clients;
  const auto& judge_setup_error = judges.setup_error;
  // The live judges' phase shows its progress as the run's scenarios do (a judge that fails on every plan is seen at
  // once, not after minutes of silence); the offline stand-in makes no calls and shows none.
  const bool live = std::any_of(llm_judges.begin(), llm_judges.end(), is_live_judge);
  Progress progress("advplan judges", corpus.size(), live ? mode : ProgressMode::none, 0, 10.0, "scenarios",
                    "judge failures");
  tbb::parallel_for(std::size_t{0}, corpus.size(), [&](std::size_t i) {
    const Scenario& sc = corpus[i];
    items[i] = plan_rubric_items(sc, kinds[sc.template_id]);
    for (std::size_t b = 0; b < blues.size(); ++b) {
      // The plan the run made (same policy, same stream), when it kept it; otherwise the policy is asked again.
      // (Scenarios are distinct across tasks, so each task moves out entries no other task touches.)
      const auto kept = kept_plans ? kept_plans->find({sc.id, blues[b].first}) : KeptBluePlans::iterator{};
      if (kept_plans && kept != kept_plans->end()) {
        plans[i][b] = std::move(kept->second);
      } else if (blues[b].second == nullptr || blues[b].second->info().external) {
        plans[i][b].reset();  // never asked again: a model or a program may answer otherwise
      } else {
        Rng rng = Rng::keyed(cfg.seed, sc.id, "blue/" + blues[b].first);  // the stream the run's conditions use
        const SerialCall serial = plan.serialise("blue:" + blues[b].first);
        try {
          plans[i][b] = blues[b].second->plan(sc, rng).plan;
        } catch (const std::exception&) {
          plans[i][b].reset();  // as the run records it (plan_blues): no plan, graded as verifying nothing
        }
      }
      if (items[i].empty()) continue;
      if (plans[i][b])
        ruled[i][b] = judge_plan_all(rules, items[i], *plans[i][b], sc);
      for (std::size_t j = 0; j < llm_judges.size(); ++j) {
        JudgeOutcome& o = outcomes[i][b][j];
        if (!judge_clients[j]) o.reason = "judge not available: " + judge_setup_error[j];
        else if (!plans[i][b]) o.reason = "no plan to judge";
        else
          o = run_judge(*judge_clients[j], items[i], *plans[i][b], sc, cfg.rubric.judge_retries,
                        &cfg.llm.generation_for("llm_judge"));
      }
    }
    progress.scenario_done(items[i].empty() ? 0 : judge_failures(outcomes[i], llm_judges, sc.id, progress));
  });
  progress.finish();
  return g;
}

/// The closing line of the live judges' phase on stderr: per judge, the plans it failed on out of those it was
/// given, and what their calls took (usage_summary: calls, tokens, cost under llm.prices). Nothing without a live
/// judge.
/// The judges' canaries (docs/RUBRIC.md "Canaries"): the known-bad plans, every judge's grades ([canary][judge],
/// the rule judges then the LLM judges) and each judge's tally.
struct CanaryRun {
  std::vector<Canary> canaries;
  std::vector<std::vector<CanaryGrade>> grades;
  std::vector<std::string> all_judges;
  std::vector<CanaryTally> tallies;
};

/// Builds the run's canaries from its scenarios and has every judge grade them; an LLM judge asks through the
/// client (and cache) it graded the plans with.
CanaryRun run_canaries(const ExperimentConfig& cfg, const std::vector<Scenario>& corpus, const Graded& g,
                       const JudgeClients& judges) {
  CanaryRun out;
  out.canaries = build_canaries(corpus, g.items, cfg.seed);
  std::vector<const CompletionClient*> clients;
  for (const auto& c : judges.clients) clients.push_back(c.get());
  const CanaryJudging judging{cfg.rubric.judges, clients, judges.setup_error, cfg.rubric.judge_retries,
                              &cfg.llm.generation_for("llm_judge")};
  out.grades = grade_canaries(out.canaries, corpus, g.items, judging);
  out.all_judges = rule_judges();
  out.all_judges.insert(out.all_judges.end(), cfg.rubric.judges.begin(), cfg.rubric.judges.end());
  out.tallies = tally_canaries(out.canaries, out.grades, out.all_judges);
  return out;
}

/// Adds the usage of one outcome's calls.
void add_outcome_usage(std::vector<ModelUsage>& usage, const std::string& judge, const JudgeOutcome& o) {
  for (const Transcript::Call& call : o.transcript.calls) add_call_usage(usage, "judge", judge, call.reply);
}

void report_judges(const ExperimentConfig& cfg, const Graded& g, const CanaryRun& canaries) {
  const std::vector<std::string>& judges = cfg.rubric.judges;
  const std::size_t rules = rule_judges().size();
  std::vector<ModelUsage> usage;
  std::string per_judge;
  for (std::size_t j = 0; j < judges.size(); ++j) {
    if (!is_live_judge(judges[j])) continue;
    std::size_t given = 0, failed = 0, canaries_failed = 0;
    for (std::size_t i = 0; i < g.outcomes.size(); ++i) {
      if (g.items[i].empty()) continue;
      for (std::size_t b = 0; b < g.outcomes[i].size(); ++b) {
        const JudgeOutcome& o = g.outcomes[i][b][j];
        if (!g.plans[i][b]) continue;
        ++given;
        failed += o.ok ? 0 : 1;
        add_outcome_usage(usage, judges[j], o);
      }
    }
    for (const auto& per_canary : canaries.grades) {
      canaries_failed += per_canary[rules + j].ok ? 0 : 1;
      add_outcome_usage(usage, judges[j], per_canary[rules + j].llm);
    }
    per_judge += fmt::format("{}{} failed on {} of {} plans and {} of {} canaries", per_judge.empty() ? "" : ", ",
                             judges[j], failed, given, canaries_failed, canaries.grades.size());
  }
  if (per_judge.empty()) return;
  const std::string u = usage_summary(usage, cfg.llm);
  fmt::print(stderr, "advplan: rubric judges: {}; {}\n", per_judge, u.empty() ? "no model calls" : u);
}

/// The rubric files' rows and lines, and the verdicts the scores and the agreement read.
struct RubricRecords {
  RubricSet set;
  std::vector<Verdict> verdicts;
  std::vector<std::string> transcripts;  ///< lines of rubric/transcripts.jsonl (the live judges' calls)
  io::CsvTable items_csv{{"template", "case_id", "item_id", "step", "tier", "severity", "weight", "question",
                          "pass_condition", "fail_condition"}};
  std::string items_jsonl, verdicts_jsonl;
  io::CsvTable calls_csv{{"judge", "model", "case_id", "brief_id", "status", "attempts", "malformed", "unknown_ids",
                          "failed_items", "reason"}};
};

/// Scenario i's rule-judge verdicts, per BLUE policy and rule judge (a missing plan is an error verdict).
void add_rule_verdicts(RubricRecords& rec, const Scenario& sc, std::size_t i, const Graded& g,
                       const GradedBlues& blues) {
  const std::vector<std::string>& rules = rule_judges();
  for (std::size_t b = 0; b < blues.size(); ++b)
    for (std::size_t r = 0; r < rules.size(); ++r) {
      Verdict v;
      v.brief_id = sc.id + "/" + blues[b].first;
      v.judge = rules[r];
      v.case_id = sc.id;
      v.model = blues[b].first;
      v.group = sc.template_id;
      if (g.plans[i][b]) {
        const auto& passed = g.ruled[i][b][r];
        for (std::size_t k = 0; k < passed.size(); ++k)
          if (!passed[k]) v.failed_items.push_back(g.items[i][k].item_id);
      } else {
        v.error = true;
      }
      detail::append_rule_verdict_line(rec.verdicts_jsonl, v);
      rec.verdicts.push_back(std::move(v));
    }
}

/// Scenario i's LLM-judge verdicts, per BLUE policy and LLM judge, with a judge_calls.csv row each.
void add_llm_verdicts(RubricRecords& rec, const Scenario& sc, std::size_t i, const Graded& g,
                      const GradedBlues& blues, const std::vector<std::string>& llm_judges, TranscriptsMode mode) {
  for (std::size_t b = 0; b < blues.size(); ++b)
    for (std::size_t jj = 0; jj < llm_judges.size(); ++jj) {
      const JudgeOutcome& o = g.outcomes[i][b][jj];
      Verdict v;
      v.brief_id = sc.id + "/" + blues[b].first;
      v.judge = llm_judges[jj];
      v.case_id = sc.id;
      v.model = blues[b].first;
      v.group = sc.template_id;
      v.error = !o.ok;
      v.unknown_ids = o.unknown_ids;
      nlohmann::json failures = nlohmann::json::array();
      for (const auto& f : o.failures) {
        v.failed_items.push_back(f.item_id);
        failures.push_back({{"item_id", f.item_id}, {"evidence", f.evidence}, {"rationale", f.rationale}});
      }
      rec.calls_csv.add({v.judge, v.model, v.case_id, v.brief_id, o.ok ? "ok" : "failed", std::to_string(o.attempts),
                         std::to_string(o.malformed), std::to_string(o.unknown_ids.size()),
                         std::to_string(o.failures.size()), o.reason});
      nlohmann::json j{{"brief_id", v.brief_id}, {"judge", v.judge},         {"case_id", v.case_id},
                       {"model", v.model},       {"group", v.group},         {"failed_items", v.failed_items},
                       {"failures", failures},   {"unknown_ids", v.unknown_ids}, {"error", v.error}};
      if (!o.ok) j["reason"] = o.reason;
      rec.verdicts_jsonl += j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
      // A live judge's calls (the offline stand-in's are a function of the prompt, as llm_offline's are).
      if (v.judge != "llm_judge_offline")
        transcript_lines(rec.transcripts, o.transcript, mode, {"judge", v.judge, sc.id, "", 0, &v.model}, !o.ok);
      rec.verdicts.push_back(std::move(v));
    }
}

/// Every scenario's items and verdicts, in corpus order.
RubricRecords collect_records(const std::vector<Scenario>& corpus, const Graded& g, const GradedBlues& blues,
                              const std::vector<std::string>& llm_judges, TranscriptsMode mode) {
  RubricRecords rec;
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    const Scenario& sc = corpus[i];
    if (g.items[i].empty()) continue;
    rec.set[sc.id] = g.items[i];
    for (const auto& it : g.items[i]) {
      rec.items_csv.add({sc.template_id, sc.id, it.item_id, it.step, std::to_string(it.tier),
                         std::string(severity_code(it.severity)), io::fmt_real(it.weight()), it.question,
                         it.pass_condition, it.fail_condition});
      detail::append_item_line(rec.items_jsonl, sc.id, it);
    }
    add_rule_verdicts(rec, sc, i, g, blues);
    add_llm_verdicts(rec, sc, i, g, blues, llm_judges, mode);
  }
  return rec;
}

/// The scores and the agreement of the verdicts: their CSVs under rubric/, their tables under tables/rubric/.
/// The canaries' calls of the live judges in rubric/transcripts.jsonl, after the plans' (`graded` is the canary).
void add_canary_transcripts(std::vector<std::string>& lines, const CanaryRun& run, const std::vector<Scenario>& corpus,
                            TranscriptsMode mode) {
  const std::size_t rules = rule_judges().size();
  for (std::size_t j = rules; j < run.all_judges.size(); ++j) {
    if (!is_live_judge(run.all_judges[j])) continue;
    for (std::size_t c = 0; c < run.canaries.size(); ++c) {
      const std::string graded = "canary:" + std::string(to_string(run.canaries[c].kind));
      const CanaryGrade& gr = run.grades[c][j];
      transcript_lines(lines, gr.llm.transcript, mode,
                       {"judge", run.all_judges[j], corpus[run.canaries[c].scenario].id, "", 0, &graded}, !gr.ok);
    }
  }
}

/// rubric/canaries.csv, rubric/canary_judges.csv and its table, and one stderr line per flagged judge. Returns
/// canary_judges.csv, which the scores table marks its judges from.
io::CsvTable add_canary_files(std::vector<std::pair<std::string, std::string>>& files, const CanaryRun& run,
                              const std::vector<Scenario>& corpus, const Graded& g) {
  files.emplace_back("rubric/canaries.csv",
                     canaries_csv(run.canaries, corpus, g.items, run.grades, run.all_judges).to_string());
  io::CsvTable cj = canary_judges_csv(run.tallies);
  files.emplace_back("rubric/canary_judges.csv", cj.to_string());
  const TextTable t = canary_judges_table(cj, "canary_judges");
  files.emplace_back("tables/rubric/canary_judges.md", t.markdown());
  files.emplace_back("tables/rubric/canary_judges.tex", t.latex());
  for (const CanaryTally& tally : run.tallies)
    if (tally.flagged()) fmt::print(stderr, "{}\n", canary_warning(tally));
  return cj;
}

void add_scores_and_agreement(std::vector<std::pair<std::string, std::string>>& files, const RubricRecords& rec,
                              const ExperimentConfig& cfg, const BootstrapSettings& bs,
                              const io::CsvTable& canary_judges) {
  const MeanOver mean_over = cfg.rubric.mean_over == "scenarios" ? MeanOver::brief : MeanOver::group;
  // Scores and agreement read the same verdicts and have their own keyed streams: computed concurrently (the
  // scores are serial, the agreement's pairs and replicates fill the other thread), joined in a fixed order.
  ScoreReport scores;
  AgreementReport agreement;
  tbb::parallel_invoke([&] { scores = score_verdicts(rec.set, rec.verdicts, mean_over, bs.resamples, bs.seed); },
                       [&] { agreement = judge_agreement(rec.set, rec.verdicts, bs.resamples, bs.seed); });
  // The tables go with the run's other tables (tables/rubric/), which `advplan tables` rebuilds from the CSVs.
  // The scores table marks each judge with its canaries (rendered from the two CSVs, as `advplan tables` does).
  for (auto& [name, text] : scores.files)
    if (name == "scores_per_policy.md" || name == "scores_per_policy.tex") {
      const auto csv = std::find_if(scores.files.begin(), scores.files.end(),
                                    [](const auto& f) { return f.first == "scores_per_policy.csv"; });
      const TextTable t = scores_per_policy_table(io::CsvTable::parse(csv->second, "scores_per_policy.csv"),
                                                  "scores_per_policy", &canary_judges);
      text = name.ends_with(".md") ? t.markdown() : t.latex();
    }
  for (auto* report_files : {&scores.files, &agreement.files})
    for (auto& [name, text] : *report_files) {
      const bool table = name.ends_with(".md") || name.ends_with(".tex");
      files.emplace_back((table ? "tables/rubric/" : "rubric/") + name, std::move(text));
    }
}

}  // namespace

namespace {

std::vector<std::pair<std::string, std::string>> layer_files(const RunPlan& plan, const BootstrapSettings& bs,
                                                             const std::vector<Scenario>* kept_corpus,
                                                             KeptBluePlans* kept_plans, const GradedBlues& blues,
                                                             const LayerOptions& options) {
  const ExperimentConfig& cfg = *plan.cfg;
  std::map<std::string, std::vector<std::string>> kinds;
  bool any = false;
  for (const auto& t : cfg.templates) {
    kinds[t.id] = t.rubric_items;
    any = any || !t.rubric_items.empty();
  }
  if (!any) return {};
  // The run's scenarios when it kept them (CorpusMemo), else generated here.
  std::vector<Scenario> generated;
  const std::vector<Scenario>* kept = kept_corpus;
  if (!kept) generated = generate_corpus(cfg);
  const std::vector<Scenario>& corpus = kept ? *kept : generated;
  const JudgeClients judges = make_judge_clients(plan, options.no_endpoint);
  const Graded graded = grade_corpus(plan, corpus, kinds, blues, kept_plans, judges, options.progress);
  const CanaryRun canaries = run_canaries(cfg, corpus, graded, judges);
  report_judges(cfg, graded, canaries);
  RubricRecords rec = collect_records(corpus, graded, blues, cfg.rubric.judges, cfg.transcripts);
  add_canary_transcripts(rec.transcripts, canaries, corpus, cfg.transcripts);
  std::vector<std::pair<std::string, std::string>> files;
  files.reserve(24);
  files.emplace_back("rubric/items.csv", rec.items_csv.to_string());
  files.emplace_back("rubric/rubric_items.jsonl", rec.items_jsonl);
  files.emplace_back("rubric/verdicts.jsonl", rec.verdicts_jsonl);
  if (!cfg.rubric.judges.empty()) files.emplace_back("rubric/judge_calls.csv", rec.calls_csv.to_string());
  if (!rec.transcripts.empty()) {
    std::string text;
    for (const auto& line : rec.transcripts) text += line + "\n";
    files.emplace_back("rubric/transcripts.jsonl", std::move(text));
  }
  const io::CsvTable canary_judges = add_canary_files(files, canaries, corpus, graded);
  add_scores_and_agreement(files, rec, cfg, bs, canary_judges);
  return files;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> rubric_layer_files(const RunPlan& plan, const BootstrapSettings& bs,
                                                                    const std::vector<Scenario>* kept_corpus,
                                                                    KeptBluePlans* kept_plans, const LayerOptions& options) {
  GradedBlues blues;
  for (const auto& [spec, policy] : plan.blues)
    if (rubric_grades_blue(*policy, kept_plans != nullptr)) blues.emplace_back(spec, policy.get());
  return layer_files(plan, bs, kept_corpus, kept_plans, blues, options);
}

std::vector<std::pair<std::string, std::string>> regrade_files(const RunPlan& plan, const BootstrapSettings& bs,
                                                               const std::string& plans_jsonl, const LayerOptions& options) {
  KeptBluePlans kept;
  GradedBlues blues;
  for (PlayedPlan& p : read_played_plans(plans_jsonl)) {
    if (p.side != Side::Blue || !p.condition.empty() || p.sample != 0) continue;
    if (std::none_of(blues.begin(), blues.end(), [&](const auto& b) { return b.first == p.policy; }))
      blues.emplace_back(p.policy, nullptr);
    kept.try_emplace({p.scenario_id, p.policy}, std::move(p.plan));
  }
  std::sort(blues.begin(), blues.end());  // the spec order of plan.blues (a std::map), as the run's own layer
  return layer_files(plan, bs, nullptr, &kept, blues, options);
}

std::vector<std::pair<std::string, std::string>> rubric_metadata(const ExperimentConfig& cfg) {
  std::string judges;
  for (const auto& j : rule_judges()) judges += (judges.empty() ? "" : ",") + j;
  bool llm = false;
  for (const auto& j : cfg.rubric.judges) {
    judges += "," + j;
    llm = llm || is_llm_judge(j);
  }
  std::vector<std::pair<std::string, std::string>> out{{"mean_over", cfg.rubric.mean_over}, {"judges", judges}};
  if (llm) {
    out.emplace_back("judge_retries", std::to_string(cfg.rubric.judge_retries));
    out.emplace_back("judge_prompt_sha256", judge_prompt_sha256());
  }
  return out;
}

namespace {

class RubricObserver final : public RunObserver {
 public:
  explicit RubricObserver(ProgressMode judges_progress) : judges_progress_(judges_progress) {}
  std::string name() const override { return "rubric"; }

  void begin(const RunPlan& plan, const RunScope& scope) override {
    std::lock_guard lock(m_);
    kept_.clear();
    seen_ = 0;
    total_ = scope.total;
    enabled_ = rubric_layer_enabled(*plan.cfg);
    keep_ = enabled_ && scope.whole_run_here;  // the plans reach finish() only then
  }

  bool wants_corpus() const override { return keep_; }

  void scenario(std::size_t, const Scenario& sc, const ScenarioOutcome& o, std::vector<std::vector<TraceRow>>&) override {
    if (!keep_) return;
    std::lock_guard lock(m_);
    ++seen_;
    for (const auto& [spec, p] : o.blue_plans) kept_.insert_or_assign({sc.id, spec}, p);
  }

  std::vector<std::pair<std::string, std::string>> finish(const RunArtifacts& run) override {
    if (!enabled_) return {};
    // The kept plans are all the run's plans when this process saw every scenario. A resumed run saw the scenarios
    // after its resume point only: it takes the earlier ones' plans from the run's plans.jsonl, which holds every
    // scenario's by then. Without that file the external policies are left out rather than graded as having no
    // plan for the earlier scenarios (the built-in ones are made again from their streams).
    bool all = keep_ && seen_ == total_;
    if (keep_ && !all) all = add_played_plans(run.run.dir);
    LayerOptions options;
    options.progress = judges_progress_;
    return rubric_layer_files(run.plan, run.bootstrap, run.corpus, all ? &kept_ : nullptr, options);
  }

  std::vector<std::pair<std::string, std::string>> metadata(const ExperimentConfig& cfg) const override {
    return rubric_metadata(cfg);
  }

 private:
  /// Adds the BLUE plans of DIR/plans.jsonl that this process did not see; false when the run wrote no such file.
  bool add_played_plans(const std::string& dir) {
    const std::string path = (std::filesystem::path(dir) / "plans.jsonl").string();
    if (!std::filesystem::is_regular_file(path)) return false;
    for (PlayedPlan& p : read_played_plans(path))
      if (p.side == Side::Blue && p.condition.empty() && p.sample == 0)
        kept_.try_emplace({p.scenario_id, p.policy}, std::move(p.plan));
    return true;
  }

  std::mutex m_;
  KeptBluePlans kept_;
  std::size_t seen_ = 0, total_ = 0;
  bool enabled_ = false, keep_ = false;
  ProgressMode judges_progress_;
};

}  // namespace

std::shared_ptr<RunObserver> make_rubric_observer(ProgressMode judges_progress) {
  return std::make_shared<RubricObserver>(judges_progress);
}

}  // namespace advplan::rubric
