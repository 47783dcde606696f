// The rubric-sensitivity and framing-sensitivity studies (docs/METRICS.md "Rubric validators" and "Framing").
#include <gtest/gtest.h>

#include <atomic>
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <set>

#include "advplan/council/council.hpp"
#include "advplan/run/scenario_eval.hpp"
#include "advplan/rubric/plans.hpp"
#include "advplan/pipeline/standard_run.hpp"
#include "advplan/run/runner.hpp"
#include "advplan/studies/studies.hpp"
#include "advplan/run/trace_schema.hpp"
#include "advplan/metrics/rubric.hpp"
#include "advplan/core/random.hpp"
#include "advplan/run/config.hpp"
#include "advplan/policy/blue_policy.hpp"
#include "advplan/policy/red_candidate.hpp"
#include "advplan/policy/red_policy.hpp"
#include "advplan/metrics/frontier.hpp"
#include "advplan/io/csv.hpp"
#include "support/fixtures.hpp"
#include "support/plan_sets.hpp"

namespace advplan {
namespace {

using io::CsvTable;

/// One scenario, two records, scores chosen by hand:
///   record r1: base .5, constraint .6, logistics .5, adversarial .4
///   record r2: base .8, constraint .8, logistics .6, adversarial .8
CsvTable hand_records() {
  CsvTable t(schema::rubric_records());
  auto add = [&](const char* rec, const char* v, const char* score) { t.add({rec, "s-1", "seed_blue", v, score}); };
  add("s-1/r1", "base", "0.500000");
  add("s-1/r1", "constraint", "0.600000");
  add("s-1/r1", "logistics", "0.500000");
  add("s-1/r1", "adversarial_review", "0.400000");
  add("s-1/r2", "base", "0.800000");
  add("s-1/r2", "constraint", "0.800000");
  add("s-1/r2", "logistics", "0.600000");
  add("s-1/r2", "adversarial_review", "0.800000");
  return t;
}

double stat(const CsvTable& t, const std::string& s, const std::string& a, const std::string& b) {
  for (std::size_t i = 0; i < t.size(); ++i)
    if (t.at(i, "statistic") == s && t.at(i, "validator_a") == a && t.at(i, "validator_b") == b) return t.real(i, "mean");
  ADD_FAILURE() << "no row " << s << " " << a << " " << b;
  return std::nan("");
}

TEST(RubricStudy, AgreementAndDeviationOnHandMadeRecords) {
  const CsvTable t = rubric_sensitivity_table(hand_records(), {200, 7});
  // constraint vs logistics: |.6-.5| = .1, |.8-.6| = .2 -> mean .15 -> agreement .85
  EXPECT_NEAR(stat(t, "agreement", "constraint", "logistics"), 0.85, 1e-6);
  // constraint vs adversarial: .2, 0 -> .1 -> .9
  EXPECT_NEAR(stat(t, "agreement", "constraint", "adversarial_review"), 0.90, 1e-6);
  // logistics vs adversarial: .1, .2 -> .15 -> .85
  EXPECT_NEAR(stat(t, "agreement", "logistics", "adversarial_review"), 0.85, 1e-6);
  EXPECT_NEAR(stat(t, "mean_pairwise_agreement", "", ""), (0.85 + 0.90 + 0.85) / 3, 1e-6);
  // deviations from base: constraint (.1 + 0)/2 = .05; logistics (0 + .2)/2 = .1; adversarial (.1 + 0)/2 = .05
  EXPECT_NEAR(stat(t, "deviation_from_base", "constraint", "base"), 0.05, 1e-6);
  EXPECT_NEAR(stat(t, "deviation_from_base", "logistics", "base"), 0.10, 1e-6);
  EXPECT_NEAR(stat(t, "deviation_from_base", "adversarial_review", "base"), 0.05, 1e-6);
  EXPECT_NEAR(stat(t, "mean_deviation_from_base", "", "base"), 0.2 / 3, 1e-6);
}

TEST(RubricStudy, ValidatorsAreTheBaseRubricAndThreeEmphases) {
  const auto& v = rubric_validators();
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0].name, "base");
  for (double w : v[0].weights) EXPECT_EQ(w, 1.0);
  EXPECT_EQ(rubric_agreement({0.2, 0.4}, {0.3, 0.4}), 1.0 - 0.05);
}

/// A RED policy that reads the framing label, as a prompt-driven model or a plug-in may: its candidates come from a
/// stream named after the label. It keeps PolicyInfo::reads_framing at its default, true, so the framing study must
/// replay it under every label. (Registered, so the RED conformance suite checks it too.)
class LabelReadingRed final : public RedPolicy {
 public:
  static PolicyInfo static_info() {
    return {"label_reading_test", Side::Red, false, 1, ThreadSafety::constant, {},
            "test policy: best of two candidates from a stream named after the scenario's framing label"};
  }
  explicit LabelReadingRed(Params p) : RedPolicy(static_info(), 1, std::move(p)) {}

 protected:
  RedResponse do_respond(const RedRequest& req, CandidateCache*) const override {
    RedRequest r = req;
    r.stream += "/" + std::string(to_string(req.scenario->framing));
    RedResponse out;
    out.candidates = sample_red_candidates(r, 2, nullptr);
    std::vector<double> q;
    for (const auto& c : out.candidates) q.push_back(c.valid ? c.q.q : std::nan(""));
    out.selected = select_quality_greedy(q);
    return out;
  }
};

}  // namespace
}  // namespace advplan

ADVPLAN_REGISTER_RED_POLICY(::advplan::LabelReadingRed::static_info(),
                            [](const ::advplan::PolicySpec&, const ::advplan::Params& p,
                               const ::advplan::PolicyContext&) -> std::unique_ptr<::advplan::RedPolicy> {
                              return std::make_unique<::advplan::LabelReadingRed>(p);
                            })

namespace advplan {
namespace {

class FramingStudy : public ::testing::Test {
 protected:
  void SetUp() override {
    cfg_ = default_experiment_config();
    cfg_.seed_to = cfg_.seed_from + 4;  // 5 seeds x 5 templates
    plan_ = prepare_run(cfg_, {{"greedy@8", "seed", "greedy@8", "main"}});
    red_ = make_red_policy("greedy@8", plan_.ctx);
    blue_ = make_blue_policy("seed", plan_.ctx);
  }
  /// Runs `plan` into `out` without a progress bar (threads 0: all cores); returns `out`.
  /// Runs `plan` into `out` with the standard observers, `studies` (when given) in place of the standard studies
  /// observer, and `extra` after them.
  static std::string run_into(const RunPlan& plan, const std::string& out, int threads = 0,
                              std::shared_ptr<StudiesObserver> studies = nullptr, RunObservers extra = {}) {
    RunOptions opts;
    opts.out_dir = out;
    opts.threads = threads;
    opts.progress = false;
    opts.observers = standard_observers(opts.studies);
    if (studies) opts.observers.front() = studies;
    for (auto& o : extra) opts.observers.push_back(std::move(o));
    run_experiment(plan, opts);
    return out;
  }
  ExperimentConfig cfg_;
  RunPlan plan_;
  std::unique_ptr<RedPolicy> red_;
  std::unique_ptr<BluePolicy> blue_;
};

TEST_F(FramingStudy, MetadataDeltaIsExactlyZeroComputed) {
  const auto neutral = framing_outcome(plan_, FramingMode::metadata, Framing::neutral, *blue_, *red_);
  for (Framing f : {Framing::blue_favorable, Framing::red_favorable}) {
    const auto o = framing_outcome(plan_, FramingMode::metadata, f, *blue_, *red_);
    ASSERT_EQ(o.blue_quality.size(), 25u);
    for (std::size_t i = 0; i < o.blue_quality.size(); ++i) {
      EXPECT_EQ(o.blue_quality[i], neutral.blue_quality[i]) << i;
      EXPECT_EQ(o.advantage[i], neutral.advantage[i]) << i;
    }
  }
}

// The framing study takes a metadata arm's outcome from its neutral arm when neither policy reads the framing
// label (PolicyInfo::reads_framing == false). Every built-in policy that declares so must answer a scenario
// exactly as it answers the same scenario under another framing label: same BLUE plan, same RED candidates and
// choice, over every template, five seeds and both non-neutral framings.
TEST_F(FramingStudy, PoliciesThatDeclareThemselvesLabelBlindAnswerEveryFramingAlike) {
  ExperimentConfig cfg = cfg_;
  cfg.framing_mode = FramingMode::metadata;
  const std::vector<Scenario> neutral = generate_corpus(cfg, Framing::neutral);
  std::vector<std::vector<Scenario>> framed;
  for (Framing f : {Framing::blue_favorable, Framing::red_favorable}) framed.push_back(generate_corpus(cfg, f));
  for (const auto& corpus : framed) {
    ASSERT_EQ(corpus.size(), neutral.size());
    for (std::size_t i = 0; i < corpus.size(); ++i) ASSERT_NE(corpus[i], neutral[i]) << "the label must differ";
  }
  // A spec for each policy: its name, or name:ARGUMENT for the one argument a label-blind built-in takes.
  auto spec_of = [&](const std::string& name, const PolicyInfo& info) -> std::string {
    if (info.argument.empty()) return info.samples_k ? name + "@4" : name;
    if (info.argument == "ROLE") return name + ":information";
    if (info.argument == "FILE") return testing::plan_set_spec(neutral, plan_.ctx);  // plans: keyed by scenario id
    ADD_FAILURE() << name << " takes an argument this test does not know (" << info.argument << ")";
    return name;
  };
  std::size_t blue_checked = 0, red_checked = 0;
  for (const auto& name : BlueRegistry::instance().names()) {
    const PolicyInfo& info = BlueRegistry::instance().info(name, "BLUE");
    if (info.reads_framing) continue;
    const auto policy = make_blue_policy(spec_of(name, info), plan_.ctx);
    for (const auto& corpus : framed)
      for (std::size_t i = 0; i < corpus.size(); ++i) {
        Rng r0 = Rng::keyed(cfg.seed, neutral[i].id, "blue/" + name), r1 = r0;
        const BluePlanResult a = policy->plan(neutral[i], r0), b = policy->plan(corpus[i], r1);
        ASSERT_TRUE(a.plan.has_value()) << name << " " << neutral[i].id << ": " << a.failure;
        ASSERT_TRUE(b.plan.has_value()) << name << " " << corpus[i].id << ": " << b.failure;
        EXPECT_EQ(*a.plan, *b.plan) << name << " plans " << corpus[i].id << " differently under "
                                    << to_string(corpus[i].framing);
      }
    ++blue_checked;
  }
  for (const auto& name : RedRegistry::instance().names()) {
    const PolicyInfo& info = RedRegistry::instance().info(name, "RED");
    if (info.reads_framing) continue;
    const auto policy = make_red_policy(spec_of(name, info), plan_.ctx);
    for (const auto& corpus : framed)
      for (std::size_t i = 0; i < corpus.size(); ++i) {
        const Plan& blue = neutral[i].blue_seed_plans.front();
        ASSERT_EQ(blue, corpus[i].blue_seed_plans.front());
        const RedResponse a = policy->respond(red_request(neutral[i], blue, plan_.ctx, "baseline"));
        const RedResponse b = policy->respond(red_request(corpus[i], blue, plan_.ctx, "baseline"));
        ASSERT_EQ(a.candidates.size(), b.candidates.size()) << name << " " << corpus[i].id;
        EXPECT_EQ(a.selected, b.selected) << name << " " << corpus[i].id;
        for (std::size_t c = 0; c < a.candidates.size(); ++c) {
          EXPECT_EQ(a.candidates[c].plan, b.candidates[c].plan) << name << " " << corpus[i].id << " candidate " << c;
          EXPECT_EQ(a.candidates[c].q.q, b.candidates[c].q.q) << name << " " << corpus[i].id << " candidate " << c;
          EXPECT_EQ(a.candidates[c].d->D, b.candidates[c].d->D) << name << " " << corpus[i].id << " candidate " << c;
          EXPECT_EQ(a.candidates[c].pressure.magnitude, b.candidates[c].pressure.magnitude) << name << " " << c;
        }
      }
    ++red_checked;
  }
  // The paper's framing pairing (seed, greedy) is among them, with the other samplers and the proposer.
  EXPECT_GE(blue_checked, 3u);
  EXPECT_GE(red_checked, 3u);
  EXPECT_FALSE(RedRegistry::instance().info("llm_offline", "RED").reads_framing == false)
      << "the offline LLM reads its prompt, which carries the label";
}

// The other side of the reuse: a policy that reads the label (reads_framing left true) is replayed under every
// metadata label, so the study measures its sensitivity: its metadata deltas are not all zero.
TEST_F(FramingStudy, APolicyThatReadsTheLabelIsReplayedUnderEveryMetadataLabel) {
  ExperimentConfig cfg = cfg_;
  cfg.studies.rubric = cfg.studies.components = cfg.studies.attribution = false;
  cfg.studies.framing_blue = "seed";
  cfg.studies.framing_red = "label_reading_test";
  const RunPlan plan = prepare_run(cfg, {{"greedy@8", "seed", "greedy@8", "main"}});
  const CsvTable per(schema::per_scenario()), records(schema::rubric_records());
  const auto files = run_studies(plan, per, records, nullptr, {200, 7});
  ASSERT_EQ(files.size(), 1u);
  ASSERT_EQ(files[0].first, "studies/framing.csv");
  const CsvTable t = CsvTable::parse(files[0].second, "framing.csv");
  std::size_t metadata_rows = 0, moved = 0;
  for (std::size_t i = 0; i < t.size(); ++i)
    if (t.at(i, "framing_mode") == "metadata" && t.at(i, "metric") == "advantage" && t.at(i, "framing") != "mean_abs") {
      ++metadata_rows;
      moved += t.real(i, "delta") != 0.0 || t.real(i, "ci_lo") != 0.0 || t.real(i, "ci_hi") != 0.0;
    }
  EXPECT_EQ(metadata_rows, 2u);
  EXPECT_EQ(moved, 2u) << "a label-reading RED policy was not replayed under the metadata labels:\n" << files[0].second;
}

// The framing study's base arm comes from the run's own condition pairing the study's policies when the run has
// one (the studies observer keeps those games); a run without it plays every game of the arm in the study. The
// study's file must be the same either way, at 1 and 2 threads.
TEST_F(FramingStudy, TheBaseArmTakenFromTheRunIsTheArmPlayedAgain) {
  ExperimentConfig cfg = cfg_;
  cfg.studies.rubric = cfg.studies.components = false;
  ASSERT_EQ(cfg.framing_mode, FramingMode::metadata);
  testing::TempDir dir("framing-base");
  auto framing_csv = [&](const Condition& c, int threads, const std::string& name) {
    return testing::read_file(run_into(prepare_run(cfg, {c}), dir / name, threads) + "/studies/framing.csv");
  };
  const std::string played = framing_csv({"single", "seed", "single", "main"}, 1, "played");
  ASSERT_NE(played, "");
  for (int threads : {1, 2})
    EXPECT_EQ(framing_csv({"greedy@8", "seed", "greedy@8", "main"}, threads, "taken" + std::to_string(threads)), played)
        << threads << " threads";
  // Bit for bit, below the file's six decimals: what the run kept is the arm played again, for every scenario.
  const RunPlan plan = prepare_run(cfg, {{"greedy@8", "seed", "greedy@8", "main"}});
  const auto observer = std::make_shared<StudiesObserver>();
  const std::string kept_dir = run_into(plan, dir / "kept", 0, observer);
  ASSERT_TRUE(observer->played());
  const FramingPlayed kept = *observer->played();
  const auto again = framing_outcome(plan, FramingMode::metadata, Framing::neutral, *blue_, *red_);
  const auto corpus = generate_corpus(cfg);
  ASSERT_EQ(corpus.size(), again.advantage.size());
  ASSERT_EQ(kept.size(), corpus.size());
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    const auto it = kept.find(corpus[i].id);
    ASSERT_NE(it, kept.end()) << corpus[i].id;
    EXPECT_EQ(std::memcmp(&it->second.first, &again.blue_quality[i], sizeof(double)), 0) << corpus[i].id;
    EXPECT_EQ(std::memcmp(&it->second.second, &again.advantage[i], sizeof(double)), 0) << corpus[i].id;
  }
  // And the study reads them: the run's file is the study over the kept values, and other kept values change it.
  const CsvTable per(schema::per_scenario()), records(schema::rubric_records());
  const BootstrapSettings bs{cfg.bootstrap.resamples, cfg.bootstrap.seed};
  const auto study = [&](const FramingPlayed& p) {
    return run_studies(plan, per, records, nullptr, bs, nullptr, &p).at(0).second;
  };
  EXPECT_EQ(study(kept), testing::read_file(kept_dir + "/studies/framing.csv"));
  FramingPlayed other_values;
  for (const auto& sc : corpus) other_values[sc.id] = {0.5, 0.25};
  EXPECT_NE(study(other_values), testing::read_file(kept_dir + "/studies/framing.csv"));
  // Where the run's games are not the arm's (applied framing changes the scenarios, a map changes the
  // qualities), the run keeps nothing for the study.
  for (const bool applied : {true, false}) {
    ExperimentConfig other = cfg;
    other.seed_to = other.seed_from;  // 5 scenarios
    if (applied) other.framing_mode = FramingMode::applied;
    else other.terrain_geo = true;
    const RunPlan p = prepare_run(other, {{"greedy@8", "seed", "greedy@8", "main"}});
    const auto o = std::make_shared<StudiesObserver>();
    run_into(p, dir / (applied ? "applied" : "geo"), 0, o);
    EXPECT_FALSE(o->played()) << (applied ? "applied framing" : "terrain: geo");
  }
}

namespace {
/// An observer that takes the run's corpus (wants_corpus) and keeps a copy; with `fail_after`, its scenario() throws
/// on that many scenarios' notice, which interrupts the run as a kill would (the journal stays resumable).
class CorpusProbe final : public RunObserver {
 public:
  explicit CorpusProbe(std::size_t fail_after = SIZE_MAX) : fail_after_(fail_after) {}
  std::string name() const override { return "corpus_probe"; }
  bool wants_corpus() const override { return true; }
  void scenario(std::size_t, const Scenario&, const ScenarioOutcome&, std::vector<std::vector<TraceRow>>&) override {
    if (++seen_ > fail_after_) throw std::runtime_error("probe: interrupted");
  }
  std::vector<std::pair<std::string, std::string>> finish(const RunArtifacts& run) override {
    if (run.corpus) corpus = *run.corpus;
    got_corpus = run.corpus != nullptr;
    return {};
  }
  std::vector<Scenario> corpus;
  bool got_corpus = false;

 private:
  std::size_t fail_after_;
  std::atomic<std::size_t> seen_{0};
};
}  // namespace

// The runner keeps the run's scenarios for the observers that ask (wants_corpus) instead of their generating them
// again: the kept corpus is generate_corpus's, also after a resume (the scenarios the interrupted run evaluated are
// generated then), and the framing study's arms on it are those on a generated corpus. Under applied framing,
// where the run's scenarios are not the framing study's base, only the rubric layer asks for them.
TEST_F(FramingStudy, TheStudiesTakeTheRunsCorpusWhereItIsTheirs) {
  ExperimentConfig cfg = cfg_;
  cfg.seed_to = cfg.seed_from + 1;  // 10 scenarios
  cfg.studies.rubric = cfg.studies.components = false;
  testing::TempDir dir("corpus-kept");
  const auto corpus = generate_corpus(cfg);
  const RunPlan plan = prepare_run(cfg, {{"greedy@8", "seed", "greedy@8", "main"}});
  {
    const auto probe = std::make_shared<CorpusProbe>();
    run_into(plan, dir / "metadata", 0, nullptr, {probe});
    ASSERT_TRUE(probe->got_corpus);
    EXPECT_EQ(probe->corpus, corpus);
    // The framing study's base is then the kept corpus relabelled: the arms are those without it.
    for (const FramingMode mode : {FramingMode::metadata, FramingMode::applied})
      for (const Framing f : {Framing::neutral, Framing::blue_favorable}) {
        const auto a = framing_outcome(plan, mode, f, *blue_, *red_, &probe->corpus);
        const auto b = framing_outcome(plan, mode, f, *blue_, *red_);
        ASSERT_EQ(a.advantage.size(), corpus.size());
        for (std::size_t i = 0; i < a.advantage.size(); ++i) {
          EXPECT_EQ(std::memcmp(&a.advantage[i], &b.advantage[i], sizeof(double)), 0) << i;
          EXPECT_EQ(std::memcmp(&a.blue_quality[i], &b.blue_quality[i], sizeof(double)), 0) << i;
        }
      }
  }
  {
    // Interrupted after 4 scenarios, then resumed: the kept corpus is still the whole corpus, in order.
    RunOptions opts;
    opts.out_dir = dir / "resumed";
    opts.threads = 1;
    opts.progress = false;
    opts.checkpoint_every = 1;
    opts.observers = standard_observers(true);
    opts.observers.push_back(std::make_shared<CorpusProbe>(4));
    EXPECT_THROW(run_experiment(plan, opts), std::exception);
    const auto probe = std::make_shared<CorpusProbe>();
    opts.observers.back() = probe;
    opts.resume = true;
    const RunSummary s = run_experiment(plan, opts);
    EXPECT_GT(s.resumed_from, 0u);
    ASSERT_TRUE(probe->got_corpus);
    EXPECT_EQ(probe->corpus, corpus);
    EXPECT_EQ(testing::read_file(dir / "resumed/studies/framing.csv"), testing::read_file(dir / "metadata/studies/framing.csv"));
  }
  // Who asks for the corpus: the framing study under metadata framing only, the rubric layer whenever it grades.
  ExperimentConfig applied = cfg;
  applied.framing_mode = FramingMode::applied;
  applied.studies.rubric = true;
  const RunPlan ran = prepare_run(applied, {{"greedy@8", "seed", "greedy@8", "main"}});
  const RunScope whole{corpus.size(), true};
  StudiesObserver studies;
  studies.begin(ran, whole);
  EXPECT_FALSE(studies.wants_corpus());
  studies.begin(plan, whole);
  EXPECT_TRUE(studies.wants_corpus());
  studies.begin(plan, RunScope{corpus.size(), false});
  EXPECT_FALSE(studies.wants_corpus()) << "a shard or a merge keeps nothing";
  const auto rubric = rubric::make_rubric_observer();
  rubric->begin(ran, whole);
  EXPECT_EQ(rubric->wants_corpus(), rubric::rubric_layer_enabled(applied));
}

// Table 6's council diagnostics and the studies take each table's intervals from one joint bootstrap over the
// table's units (docs/METRICS.md "Joint bootstrap"). A column's replicates depend only on the scope's multisets and
// its own cells, so each row must be joint_bootstrap_means of that row's column alone, rebuilt here from the run's
// CSVs (and, for the framing study, which writes no per-scenario values, from framing_outcome), with the scope key.
TEST_F(FramingStudy, EveryStudyRowIsItsColumnInItsTablesJointBootstrap) {
  ExperimentConfig cfg = cfg_;
  cfg.framing_mode = FramingMode::metadata;
  const RunPlan plan = prepare_run(cfg, run_conditions(cfg));
  testing::TempDir dir("study-joint");
  const std::string run_dir = run_into(plan, dir / "run");
  const BootstrapSettings bs{cfg.bootstrap.resamples, cfg.bootstrap.seed};
  auto alone = [&](const std::vector<double>& column, const std::string& key) {
    return joint_bootstrap_means(column, 1, bs.resamples, bs.seed, key).front();
  };
  auto same_bounds = [](const std::vector<std::string>& row, std::size_t lo, const Interval& want) {
    EXPECT_EQ(row[lo], io::fmt_real(want.lo)) << row[0] << " " << row[1] << " " << row[2];
    EXPECT_EQ(row[lo + 1], io::fmt_real(want.hi)) << row[0] << " " << row[1] << " " << row[2];
  };
  const CsvTable per = CsvTable::read(run_dir + "/per_scenario.csv", schema::per_scenario());
  // Components: the units are per_scenario.csv's scenarios sorted by id; a paired row is the per-scenario
  // difference where both conditions have an ok value.
  std::set<std::string> ids;
  for (std::size_t i = 0; i < per.size(); ++i) ids.insert(per.at(i, "scenario_id"));
  auto value = [&](const std::string& cond, const std::string& sid, const std::string& metric) {
    for (std::size_t i = 0; i < per.size(); ++i)
      if (per.at(i, "condition") == cond && per.at(i, "scenario_id") == sid && per.at(i, "status") == "ok")
        return per.real(i, metric);
    return std::nan("");
  };
  const CsvTable components = CsvTable::read(run_dir + "/studies/components.csv", schema::components());
  std::size_t checked = 0;
  for (const auto& row : components.rows()) {
    if (row[0] != "response_search" && row[0] != "selector_objective") continue;
    const auto minus = row[1].find(" - ");
    std::vector<double> column;
    for (const auto& sid : ids) {
      if (minus == std::string::npos) {
        column.push_back(value(cfg.studies.greedy, sid, row[2]));
      } else {
        const double a = value(row[1].substr(0, minus), sid, row[2]), b = value(row[1].substr(minus + 3), sid, row[2]);
        column.push_back(std::isnan(a) || std::isnan(b) ? std::nan("") : a - b);
      }
    }
    same_bounds(row, 5, alone(column, "components"));
    ++checked;
  }
  EXPECT_GE(checked, 9u);
  // Table 6: the council trace's ok rows, in order.
  const CsvTable trace = CsvTable::read(run_dir + "/council_trace.csv", schema::council_trace());
  std::vector<double> margin;
  for (std::size_t i = 0; i < trace.size(); ++i)
    if (trace.at(i, "status") == "ok") margin.push_back(trace.real(i, "robustness_margin"));
  const Interval m6 = alone(margin, "council");
  EXPECT_NE(testing::read_file(run_dir + "/tables/table6_council.md")
                .find(fmt::format("| Robustness margin | {} | {:.3f} [{:.3f}, {:.3f}] |", m6.n, m6.mean, m6.lo, m6.hi)),
            std::string::npos);
  std::size_t council_rows = 0;
  for (const auto& row : components.rows())
    if (row[0] == "council_revision" && row[2] == "robustness_margin") {
      same_bounds(row, 5, alone(margin, "components-council"));
      ++council_rows;
    }
  EXPECT_EQ(council_rows, 1u);
  // The framing study: the applied arms' per-scenario deltas.
  const CsvTable framing = CsvTable::read(run_dir + "/studies/framing.csv", schema::framing());
  const auto neutral = framing_outcome(plan, FramingMode::applied, Framing::neutral, *blue_, *red_);
  const auto red = framing_outcome(plan, FramingMode::applied, Framing::red_favorable, *blue_, *red_);
  std::vector<double> delta;
  for (std::size_t i = 0; i < red.advantage.size(); ++i) delta.push_back(red.advantage[i] - neutral.advantage[i]);
  bool found = false;
  for (const auto& row : framing.rows())
    if (row[0] == "applied" && row[1] == "red_favorable" && row[2] == "advantage") {
      same_bounds(row, 4, alone(delta, "framing"));
      found = true;
    }
  EXPECT_TRUE(found);
}

TEST_F(FramingStudy, AppliedBlueFavourableFramingChangesTheSeedPlans) {
  const auto neutral = framing_outcome(plan_, FramingMode::applied, Framing::neutral, *blue_, *red_);
  const auto blue = framing_outcome(plan_, FramingMode::applied, Framing::blue_favorable, *blue_, *red_);
  std::size_t changed = 0;
  for (std::size_t i = 0; i < neutral.blue_quality.size(); ++i) changed += blue.blue_quality[i] != neutral.blue_quality[i];
  EXPECT_GT(changed, 0u);
}

}  // namespace
}  // namespace advplan
