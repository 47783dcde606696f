// PSRO (docs/METRICS.md "PSRO"): plan sets replay as policies, the oracles score a cell exactly as the run that
// plays their plans does, each best response is at least as good as the seed plan or any drawn candidate, the
// exploitability is the brute-force NashConv of the grown matrix, and a resumed or re-threaded PSRO writes the same
// bytes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <mutex>
#include <sstream>
#include <nlohmann/json.hpp>

#include "advplan/core/error.hpp"
#include "advplan/core/validation.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/io/played_plans.hpp"
#include "advplan/metagame/metagame.hpp"
#include "advplan/metagame/psro.hpp"
#include "advplan/metrics/plan_layout.hpp"
#include "advplan/metrics/pressure.hpp"
#include "advplan/run/config.hpp"
#include "advplan/run/runner.hpp"
#include "support/chat_server.hpp"
#include "support/cli.hpp"

namespace advplan::metagame {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::TempDir;

/// The small config (6 scenarios) as a 2 x 2 matrix.
std::string psro_config(const TempDir& dir, const std::string& extra = "") {
  return testing::small_config(
      dir, {{"conditions: [single, greedy@8, constraint@8, llm_offline, {label: council, blue: council, red: greedy@8}]",
             "matrix: {blue: [seed, proposer:cyber], red: [single, greedy@4]}" + extra},
            {"budget_sweep: [1, 2, 4, 8, 16]", "budget_sweep: []"},
            {"studies: {rubric: true, framing: true, components: true}", "studies: {rubric: false, framing: false, components: false}"}});
}

PsroOptions options(const fs::path& out, int iterations, int threads = 1) {
  PsroOptions o;
  o.out_dir = out.string();
  o.iterations = iterations;
  o.resamples = 50;
  o.threads = threads;
  o.blue_budget = 24;
  o.red_k = 16;
  o.progress_mode = "none";
  return o;
}

std::map<std::string, std::string> psro_files(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    const std::string rel = fs::relative(e.path(), dir).string();
    if (rel.find("run_metadata.json") != std::string::npos) continue;  // wall-clock times
    out[rel] = testing::read_file(e.path().string());
  }
  return out;
}

TEST(PlanSetPolicy, ReplaysItsPlansOnBothSidesAndRefusesBadFiles) {
  TempDir dir("planset");
  const ExperimentConfig cfg = load_experiment_config(psro_config(dir));
  const PolicyContext ctx = policy_context(cfg);
  const Scenario sc = corpus_scenario(cfg, 0);
  Plan blue = sc.blue_seed_plans.front();
  blue.plan_id = "replayed-blue";
  const std::string file = dir / "set.jsonl";
  // A RED plan for the set: greedy@4's answer to the seed plan.
  const auto greedy = make_red_policy("greedy@4", ctx);
  const RedResponse g = greedy->respond(red_request(sc, blue, ctx, "baseline"));
  ASSERT_NE(g.chosen(), nullptr);
  testing::write_file(file, played_plan_line(sc.id, "", 0, Side::Blue, "x", &blue, "") + "\n" +
                                played_plan_line(sc.id, "c", 0, Side::Red, "y", &g.chosen()->plan, "") + "\n");
  const auto bp = make_blue_policy("plans:" + file, ctx);
  Rng rng = Rng::keyed(1, sc.id, "blue");
  const BluePlanResult r = bp->plan(sc, rng);
  ASSERT_TRUE(r.plan) << r.failure;
  EXPECT_EQ(r.plan->plan_id, "replayed-blue");
  const Scenario other = corpus_scenario(cfg, 1);
  const BluePlanResult none = bp->plan(other, rng);
  EXPECT_FALSE(none.plan);
  EXPECT_THAT(none.failure, HasSubstr("has no BLUE plan for scenario " + other.id));
  // RED replays its plan, scored against the BLUE plan as greedy@4 scored it.
  const auto rp = make_red_policy("plans:" + file, ctx);
  const RedResponse rr = rp->respond(red_request(sc, blue, ctx, "baseline"));
  ASSERT_NE(rr.chosen(), nullptr) << rr.failure;
  EXPECT_EQ(rr.chosen()->plan.plan_id, g.chosen()->plan.plan_id);
  EXPECT_EQ(rr.chosen()->q.q, g.chosen()->q.q);
  EXPECT_EQ(rr.chosen()->d->D, g.chosen()->d->D);
  EXPECT_EQ(rr.chosen()->pressure.magnitude, g.chosen()->pressure.magnitude);  // read against the BLUE plan
  EXPECT_GT(rr.chosen()->pressure.magnitude, 0.0);
  // Bad files: one sentence naming the file.
  testing::write_file(dir / "two.jsonl", played_plan_line(sc.id, "", 0, Side::Blue, "x", &blue, "") + "\n" +
                                             played_plan_line(sc.id, "", 0, Side::Blue, "x", &blue, "") + "\n");
  try {
    make_blue_policy("plans:" + (dir / "two.jsonl"), ctx);
    ADD_FAILURE() << "a second plan for a scenario was accepted";
  } catch (const PolicyError& e) {
    EXPECT_THAT(e.what(), HasSubstr("two.jsonl: plan 2 is a second BLUE plan for scenario " + sc.id));
  }
  testing::write_file(dir / "bad.jsonl", "{\"scenario_id\": 3}\n");
  try {
    make_red_policy("plans:" + (dir / "bad.jsonl"), ctx);
    ADD_FAILURE() << "a malformed plan set was accepted";
  } catch (const PolicyError& e) {
    EXPECT_THAT(e.what(), HasSubstr("bad.jsonl line 1: 'scenario_id' is missing or not a string"));
  }
  EXPECT_THROW(make_red_policy("plans:" + (dir / "missing.jsonl"), ctx), PolicyError);
  EXPECT_THROW(make_blue_policy("plans:" + file.substr(0, file.size() - 6) + "nothing", ctx), PolicyError);
  // A FIFO as the file is refused at once, never read (a read would wait for a writer forever).
  const std::string fifo = dir / "fifo.jsonl";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  try {
    make_blue_policy("plans:" + fifo, ctx);
    ADD_FAILURE() << "a FIFO was accepted as a plan set";
  } catch (const PolicyError& e) {
    EXPECT_THAT(e.what(), HasSubstr("a FIFO or socket, not a file"));
  }
}

TEST(Psro, NashConvIsTheBruteForceGainOfBothBestReplies) {
  IntMatrix a;
  a.rows = 3;
  a.cols = 2;
  a.den = 10;
  a.num = {6, 2, 3, 5, 9, 1};
  const std::vector<double> x{0.5, 0.5}, y{0.25, 0.75};  // zero-padded to 3 rows and 2 columns
  // (A y) = (3, 4.5, 3) / 10, max .45; (x'A)_j over rows 0..1 = (4.5, 3.5)/10, min .35.
  EXPECT_NEAR(nash_conv(a, x, y), 0.45 - 0.35, 1e-15);
  // At an exact equilibrium of a 2 x 2 game NashConv is 0: A = [[1, 0], [0, 1]], x = y = (1/2, 1/2).
  IntMatrix b;
  b.rows = b.cols = 2;
  b.num = {1, 0, 0, 1};
  EXPECT_NEAR(nash_conv(b, {0.5, 0.5}, {0.5, 0.5}), 0.0, 1e-15);
}

/// The oracles' predicted values are the cells the next run played: the new row of the grown matrix `a` against
/// RED's equilibrium y, and its new column against BLUE's x (6-decimal cells, so to 1e-6).
void expect_predictions_are_the_played_cells(const PsroRow& r, const GameSolution& g, const IntMatrix& a) {
  double row = 0, col = 0;
  for (std::size_t j = 0; j < g.red.size(); ++j) row += g.red[j].value * a.value(a.rows - 1, j);
  for (std::size_t i = 0; i < g.blue.size(); ++i) col += g.blue[i].value * a.value(i, a.cols - 1);
  EXPECT_NEAR(r.blue_predicted, row, 1e-6) << "iteration " << r.iteration;
  EXPECT_NEAR(r.red_predicted, col, 1e-6) << "iteration " << r.iteration;
}

/// What one PSRO run wrote, read back.
struct PsroRun {
  io::CsvTable rows, population;
};
PsroRun read_psro(const fs::path& dir) {
  return {io::CsvTable::read((dir / "psro.csv").string()), io::CsvTable::read((dir / "population.csv").string())};
}

TEST(Psro, OraclesPredictTheCellsTheNextRunPlaysAndExploitabilityIsNashConv) {
  for (const Payoff payoff : {Payoff::advantage, Payoff::win_rate}) {
    TempDir dir("psro");
    const ExperimentConfig cfg = load_experiment_config(psro_config(dir));
    PsroOptions o = options(dir.path() / "out", 2);
    o.payoff = payoff;
    const std::vector<PsroRow> rows = run_psro(cfg, o);
    ASSERT_EQ(rows.size(), 2u);
    for (int it = 0; it < 2; ++it) {
      const PsroRow& r = rows[static_cast<std::size_t>(it)];
      EXPECT_EQ(r.blue_size, 2u + static_cast<std::size_t>(it));
      // The equilibrium the iteration solved (the population it started from), and the grown matrix.
      std::vector<std::string> dirs;
      for (int k = 0; k <= it; ++k) dirs.push_back((dir.path() / "out" / fmt::format("runs/{:03d}", k)).string());
      const MetaGameData d = read_metagame_data(dirs, payoff);
      const GameSolution g = solve_game(d.matrix(), false);
      EXPECT_EQ(g.value, r.value);
      dirs.push_back((dir.path() / "out" / fmt::format("runs/{:03d}", it + 1)).string());
      const MetaGameData grown = read_metagame_data(dirs, payoff);
      ASSERT_EQ(grown.blue.size(), d.blue.size() + 1);
      ASSERT_EQ(grown.red.size(), d.red.size() + 1);
      EXPECT_EQ(grown.blue.back(), r.blue_added);
      EXPECT_EQ(grown.red.back(), r.red_added);
      ASSERT_EQ(grown.scenarios.size(), 6u);
      const IntMatrix a = grown.matrix();
      expect_predictions_are_the_played_cells(r, g, a);
      // Exploitability: brute-force NashConv of the zero-padded equilibrium in the grown matrix.
      double best_row = -1e300, worst_col = 1e300;
      for (std::size_t i = 0; i < a.rows; ++i) {
        double v = 0;
        for (std::size_t j = 0; j < d.red.size(); ++j) v += a.value(i, j) * g.red[j].value;
        best_row = std::max(best_row, v);
      }
      for (std::size_t j = 0; j < a.cols; ++j) {
        double v = 0;
        for (std::size_t i = 0; i < d.blue.size(); ++i) v += a.value(i, j) * g.blue[i].value;
        worst_col = std::min(worst_col, v);
      }
      EXPECT_NEAR(r.exploitability, best_row - worst_col, 1e-12);
      EXPECT_NEAR(r.blue_gain + r.red_gain, r.exploitability, 1e-12);
      EXPECT_GE(r.exploitability, 0.0);
      EXPECT_LE(r.lo, r.hi);
    }
    const PsroRun w = read_psro(dir.path() / "out");
    EXPECT_EQ(w.rows.size(), 2u);
    // The population per iteration: 2 + 2, 3 + 3 and the final 4 + 4, with probabilities summing to 1 per side.
    EXPECT_EQ(w.population.size(), 4u + 6u + 8u);
    // Each added policy is a plan set with a plan for every scenario.
    for (const char* f : {"policies/blue_001.jsonl", "policies/red_001.jsonl", "policies/blue_002.jsonl"})
      EXPECT_EQ(read_played_plans((dir.path() / "out" / f).string()).size(), 6u) << f;
  }
}

TEST(Psro, TheBlueOracleNeverReturnsWorseThanTheSeedPlanAndTheRedOracleBeatsEachCandidate) {
  TempDir dir("psro-oracle");
  const ExperimentConfig cfg = load_experiment_config(psro_config(dir));
  const PolicyContext ctx = policy_context(cfg);
  OracleSettings s;
  s.run_seed = cfg.seed;
  s.quality = cfg.quality;
  s.sim = cfg.sim;
  s.ctx = &ctx;
  s.iteration = 1;
  s.blue_budget = 30;
  s.red_k = 8;
  const auto single = make_red_policy("single", ctx), greedy = make_red_policy("greedy@4", ctx);
  std::size_t improved = 0;
  for (std::size_t i = 0; i < corpus_size(cfg); ++i) {
    const Scenario sc = corpus_scenario(cfg, i);
    const BlueResponse b = blue_best_response(sc, {single.get(), greedy.get()}, {0.25, 0.75}, s, nullptr);
    ASSERT_TRUE(b.failure.empty()) << b.failure;
    EXPECT_GE(b.value, b.seed_value);
    EXPECT_LE(b.evaluations, 30);
    improved += b.value > b.seed_value ? 1 : 0;
    // Only strict improvements are taken, so a larger budget never ends lower (the search path is the same prefix).
    double last = -1;
    for (int budget = 1; budget <= 30; budget += 3) {
      OracleSettings sb = s;
      sb.blue_budget = budget;
      const double v = blue_best_response(sc, {single.get(), greedy.get()}, {0.25, 0.75}, sb, nullptr).value;
      EXPECT_GE(v, last) << sc.id << " budget " << budget;
      last = v;
    }
    EXPECT_TRUE(validate_plan(b.plan, sc, Side::Blue).empty());
    // The value is what the two policies' answers to the plan give.
    const ScoredBlue sb = score_blue(b.plan, sc, cfg.quality);
    double v = 0;
    for (const auto& [w, pol] : {std::pair{0.25, single.get()}, std::pair{0.75, greedy.get()}}) {
      const RedResponse resp = pol->respond(red_request(sc, b.plan, ctx, "baseline"));
      v += w * cell_payoff(sb, *resp.chosen(), sc, s, nullptr);
    }
    EXPECT_DOUBLE_EQ(b.value, v);
    // RED: against the seed plan and the BLUE response with weights (.5, .5), no drawn candidate does better.
    const Plan seed = sc.blue_seed_plans.front();
    const RedResponseChoice r = red_best_response(sc, {&seed, &b.plan}, {0.5, 0.5}, s, nullptr);
    ASSERT_TRUE(r.failure.empty()) << r.failure;
    EXPECT_EQ(r.candidates, 8);
    const ScoredBlue s0 = score_blue(seed, sc, cfg.quality);
    for (std::size_t a = 0; a < 2; ++a) {
      RedRequest req = red_request(sc, a == 0 ? seed : b.plan, ctx, fmt::format("psro/1/{}", a));
      for (const RedCandidate& c : sample_red_candidates(req, 4, nullptr, RedDetail::full)) {
        if (!c.valid) continue;
        const double u = 0.5 * cell_payoff(s0, score_red_plan(c.plan, sc, vulnerability(layout_plan(seed, sc)), cfg.quality, 0), sc, s, nullptr) +
                         0.5 * cell_payoff(sb, score_red_plan(c.plan, sc, vulnerability(layout_plan(b.plan, sc)), cfg.quality, 0), sc, s, nullptr);
        EXPECT_LE(r.value, u + 1e-15);
      }
    }
  }
  EXPECT_GT(improved, 0u);  // the search moves somewhere on this corpus
}

TEST(Psro, ExecOraclesReceiveTheScenarioAndTheMixtureAndAreScoredAsTheRunPlaysThem) {
  TempDir dir("psro-exec");
  const ExperimentConfig cfg = load_experiment_config(psro_config(dir));
  // A program that logs every request and answers as examples/policies/psro_oracle.py does.
  const std::string log = dir / "requests.jsonl", prog = dir / "oracle.py";
  testing::write_file(prog, "import json, sys\nsys.path.insert(0, " + testing::shell_quote(testing::kSource + "/examples/policies") +
                                ")\nfrom psro_oracle import answer\nout = open(" + testing::shell_quote(log) +
                                ", 'a')\nfor line in sys.stdin:\n    r = json.loads(line)\n    out.write(line if line.endswith('\\n') else line + '\\n')\n"
                                "    out.flush()\n    print(json.dumps({'request_id': r['request_id'], 'plan': answer(r)}), flush=True)\n");
  PsroOptions o = options(dir.path() / "out", 1);
  o.blue_oracle = o.red_oracle = "exec:python3 " + prog;
  const std::vector<PsroRow> rows = run_psro(cfg, o);
  const MetaGameData d = read_metagame_data({(dir.path() / "out/runs/000").string()}, Payoff::advantage);
  const GameSolution g = solve_game(d.matrix(), false);
  std::size_t blue = 0, red = 0;
  for (const std::string& line : [&] {
         std::vector<std::string> v;
         std::istringstream in(testing::read_file(log));
         for (std::string l; std::getline(in, l);) v.push_back(l);
         return v;
       }()) {
    const auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["oracle"], "psro");
    EXPECT_EQ(j["iteration"], 1);
    EXPECT_TRUE(j["scenario"].contains("assets"));
    const auto& m = j["opponent_mixture"];
    const bool is_blue = j["side"] == "BLUE";
    (is_blue ? blue : red) += 1;
    const auto& specs = is_blue ? d.red : d.blue;
    const auto& probs = is_blue ? g.red : g.blue;
    std::size_t k = 0;
    for (std::size_t p = 0; p < specs.size(); ++p) {
      if (!(probs[p].value > 0)) continue;
      ASSERT_LT(k, m.size());
      EXPECT_EQ(m[k]["policy"], specs[p]);
      EXPECT_EQ(m[k]["probability_exact"], probs[p].str());
      EXPECT_EQ(m[k].contains("plan"), !is_blue);
      ++k;
    }
    EXPECT_EQ(k, m.size());
  }
  EXPECT_EQ(blue, 6u);
  EXPECT_EQ(red, 6u);
  // The program's plans are the plan sets, and the oracles' values are the cells the next run played.
  const MetaGameData grown = read_metagame_data({(dir.path() / "out/runs/000").string(), (dir.path() / "out/runs/001").string()},
                                                Payoff::advantage);
  const IntMatrix a = grown.matrix();
  expect_predictions_are_the_played_cells(rows[0], g, a);
  const auto set = read_played_plans((dir.path() / "out/policies/blue_001.jsonl").string());
  ASSERT_EQ(set.size(), corpus_size(cfg));
  for (std::size_t i = 0; i < set.size(); ++i) {  // psro_oracle.py answers BLUE with the first seed plan
    const Scenario sc = corpus_scenario(cfg, i);
    EXPECT_EQ(set[i].scenario_id, sc.id);
    Plan seed = sc.blue_seed_plans.front();
    seed.plan_id = sc.id + "/blue/psro/1";
    EXPECT_EQ(played_plan_line(sc.id, "", 0, Side::Blue, "p", &*set[i].plan, ""),
              played_plan_line(sc.id, "", 0, Side::Blue, "p", &seed, ""));
  }
  // A bad oracle name is one sentence.
  PsroOptions bad = options(dir.path() / "bad", 1);
  bad.blue_oracle = "genius";
  EXPECT_THROW(run_psro(cfg, bad), ConfigError);
}

TEST(Psro, LlmOraclesGetThePlanPromptWithTheMixtureAndAreScoredAsTheRunPlaysThem) {
  TempDir dir("psro-llm");
  ExperimentConfig cfg = load_experiment_config(psro_config(dir));
  // A live endpoint on 127.0.0.1 that answers as the offline client does and keeps every user message it got.
  std::mutex mu;
  std::vector<std::string> users;
  const OfflineCompletionClient offline;
  testing::LoopbackServer server([&](const httplib::Request& req, httplib::Response& res) {
    const CompletionRequest r = testing::chat_request(nlohmann::json::parse(req.body));
    {
      const std::lock_guard<std::mutex> lock(mu);
      for (const auto& m : r.messages)
        if (m.role == "user") {
          users.push_back(m.content);
          break;
        }
    }
    res.set_content(testing::chat_reply(offline.complete(r).text).dump(), "application/json");
  });
  testing::EnvGuard endpoint("ADVPLAN_LLM_ENDPOINT"), model("ADVPLAN_LLM_MODEL");
  endpoint.unset();
  model.unset();
  cfg.llm.endpoint = server.url();
  cfg.llm.model = "oracle-model";
  PsroOptions o = options(dir.path() / "out", 1);
  o.blue_oracle = "llm:oracle-model";
  o.red_oracle = "llm_offline";
  const std::vector<PsroRow> rows = run_psro(cfg, o);
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_GE(users.size(), 6u);  // one BLUE prompt per scenario (and re-asks)
  const MetaGameData d = read_metagame_data({(dir.path() / "out/runs/000").string()}, Payoff::advantage);
  const GameSolution g = solve_game(d.matrix(), false);
  for (const std::string& u : users) {
    EXPECT_THAT(u, HasSubstr("SCENARIO:\n"));
    const auto b = u.find("OPPONENT MIXTURE:\n"), e = u.find("\nEND OPPONENT MIXTURE");
    ASSERT_NE(b, std::string::npos);
    ASSERT_NE(e, std::string::npos);
    const auto m = nlohmann::json::parse(u.substr(b + 18, e - b - 18));
    std::size_t k = 0;
    for (std::size_t j = 0; j < d.red.size(); ++j)
      if (g.red[j].value > 0) {
        ASSERT_LT(k, m.size());
        EXPECT_EQ(m[k]["policy"], d.red[j]);
        EXPECT_EQ(m[k]["probability_exact"], g.red[j].str());
        ++k;
      }
    EXPECT_EQ(k, m.size());
  }
  const MetaGameData grown = read_metagame_data({(dir.path() / "out/runs/000").string(), (dir.path() / "out/runs/001").string()},
                                                Payoff::advantage);
  const IntMatrix a = grown.matrix();
  expect_predictions_are_the_played_cells(rows[0], g, a);
  EXPECT_EQ(read_played_plans((dir.path() / "out/policies/red_001.jsonl").string()).size(), 6u);
}

TEST(Psro, SameBytesAtOneAndTwoThreadsAndAfterAResume) {
  TempDir dir("psro-bytes");
  const ExperimentConfig cfg = load_experiment_config(psro_config(dir));
  const fs::path out = dir.path() / "out";
  run_psro(cfg, options(out, 2, 1));
  const auto one = psro_files(out);
  fs::rename(out, dir.path() / "one");
  run_psro(cfg, options(out, 2, 2));
  EXPECT_EQ(psro_files(out), one);
  // One iteration, then a resume to two; and a resume after the second iteration's oracle record was lost.
  fs::remove_all(out);
  run_psro(cfg, options(out, 1, 2));
  PsroOptions more = options(out, 2, 2);
  more.resume = true;
  run_psro(cfg, more);
  EXPECT_EQ(psro_files(out), one);
  fs::remove(out / "policies/oracle_002.json");
  fs::remove(out / "psro.csv");
  run_psro(cfg, more);
  EXPECT_EQ(psro_files(out), one);
}

TEST(Psro, DirectoriesAndSettingsAreChecked) {
  TempDir dir("psro-dirs");
  const ExperimentConfig cfg = load_experiment_config(psro_config(dir));
  const fs::path out = dir.path() / "out";
  run_psro(cfg, options(out, 1));
  // A fresh PSRO refuses the directory; a resume with other settings names the field.
  EXPECT_THROW(run_psro(cfg, options(out, 1)), IoError);
  PsroOptions other = options(out, 1);
  other.resume = true;
  other.red_k = 17;
  try {
    run_psro(cfg, other);
    ADD_FAILURE() << "a resume with another red_k was accepted";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("psro.json: 'red_k' is 16, while this PSRO has 17"));
  }
  // --force clears a PSRO directory, never another one.
  PsroOptions force = options(out, 1);
  force.force = true;
  EXPECT_NO_THROW(run_psro(cfg, force));
  const fs::path plain = dir.path() / "plain";
  fs::create_directories(plain);
  testing::write_file((plain / "notes.txt").string(), "mine");
  PsroOptions wrong = options(plain, 1);
  wrong.force = true;
  EXPECT_THROW(run_psro(cfg, wrong), IoError);
  EXPECT_TRUE(fs::exists(plain / "notes.txt"));
  // A resume refuses a folder that is a symbolic link (it would write the run elsewhere), a copy of the directory
  // made elsewhere (its plan sets' specs name the original), and an earlier run whose traces no longer match its
  // MANIFEST.
  {
    PsroOptions two = options(out, 2);
    two.force = true;
    run_psro(cfg, two);
    fs::remove_all(out / "runs/002");
    fs::remove(out / "policies/oracle_002.json");
    fs::create_directories(dir.path() / "elsewhere");
    fs::create_directory_symlink(dir.path() / "elsewhere", out / "runs/002");
    PsroOptions again = options(out, 2);
    again.resume = true;
    try {
      run_psro(cfg, again);
      ADD_FAILURE() << "a symlinked run directory was written through";
    } catch (const IoError& e) {
      EXPECT_THAT(e.what(), HasSubstr("runs/002: a symbolic link"));
    }
    EXPECT_TRUE(fs::is_empty(dir.path() / "elsewhere"));
    fs::remove(out / "runs/002");
    fs::copy(out, dir.path() / "copy", fs::copy_options::recursive);
    PsroOptions copy = options(dir.path() / "copy", 2);
    copy.resume = true;
    try {
      run_psro(cfg, copy);
      ADD_FAILURE() << "a copied PSRO directory was resumed";
    } catch (const ConfigError& e) {
      EXPECT_THAT(e.what(), HasSubstr("psro.json: 'out_dir' is"));
    }
    const std::string per = (out / "runs/000/per_scenario.csv").string();
    std::string text = testing::read_file(per);
    text += "\n";  // any change of its bytes
    testing::write_file(per, text);
    try {
      run_psro(cfg, again);
      ADD_FAILURE() << "an edited run was read";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("per_scenario.csv"));
      EXPECT_THAT(e.what(), HasSubstr("MANIFEST"));
    }
  }
  // --force never clears a directory that holds a plan set the config plays.
  {
    ExperimentConfig replay = cfg;
    replay.conditions.push_back({"replay", "plans:" + (out / "policies/blue_001.jsonl").string(), "single", "main", {}});
    PsroOptions f = options(out, 1);
    f.force = true;
    try {
      run_psro(replay, f);
      ADD_FAILURE() << "--force cleared the config's own plan set";
    } catch (const IoError& e) {
      EXPECT_THAT(e.what(), HasSubstr("holds an input of this command"));
    }
    EXPECT_TRUE(fs::exists(out / "policies/blue_001.jsonl"));
  }
  // A geo config is refused in one sentence.
  ExperimentConfig geo = cfg;
  geo.terrain_geo = true;
  try {
    run_psro(geo, options(dir.path() / "geo", 1));
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("terrain: geo"));
  }
}

// A resume replays only the plan sets the PSRO wrote (issue 47 item 11): psro.json records each plan set's and
// oracle record's sha256, and an edited one is refused by name, where it once made one policy two plan sets in one
// game (3 scenarios became 2, and the exploitability 0).
TEST(Psro, AResumeRefusesAnEditedPlanSetNamingIt) {
  TempDir dir("psro-edited");
  const ExperimentConfig cfg = load_experiment_config(psro_config(dir));
  const fs::path out = dir.path() / "out";
  run_psro(cfg, options(out, 1));
  const std::string blue = (out / "policies/blue_001.jsonl").string();
  const std::string original = testing::read_file(blue);
  // Its last plan dropped: a plan set of 5 scenarios where the runs played 6.
  testing::write_file(blue, original.substr(0, original.rfind('\n', original.size() - 2) + 1));
  PsroOptions more = options(out, 2);
  more.resume = true;
  try {
    run_psro(cfg, more);
    ADD_FAILURE() << "an edited plan set was replayed";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(blue + ": does not match its sha256 in " + (out / "psro.json").string()));
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(out / "runs/002"));
  // The oracle record is checked as well; restored, the resume goes on.
  testing::write_file(blue, original);
  const std::string oracle = (out / "policies/oracle_001.json").string();
  const std::string record = testing::read_file(oracle);
  testing::write_file(oracle, record + " ");
  EXPECT_THROW(run_psro(cfg, more), IoError);
  testing::write_file(oracle, record);
  EXPECT_EQ(run_psro(cfg, more).size(), 2u);
}

// A game of one scenario has no bootstrap interval: PSRO prints n/a, never nan (issue 47).
TEST(PsroCli, AOneScenarioGamePrintsNoNan) {
  TempDir dir("psro-one");
  const std::string config = testing::small_config(
      dir, {{"templates: [urban, air-defense]", "templates: [urban]"},
            testing::seeds("[100, 100]"),
            {"conditions: [single, greedy@8, constraint@8, llm_offline, {label: council, blue: council, red: greedy@8}]",
             "matrix: {blue: [seed, proposer:cyber], red: [single, greedy@4]}"},
            {"budget_sweep: [1, 2, 4, 8, 16]", "budget_sweep: []"},
            {"studies: {rubric: true, framing: true, components: true}",
             "studies: {rubric: false, framing: false, components: false}"}});
  const auto r = testing::advplan("psro " + testing::quote(config) + " --iterations 1 --resamples 20 --red-k 8 "
                                  "--blue-budget 12 --progress plain --out " + testing::quote(dir / "out"), dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("nan")));
  EXPECT_THAT(r.err, HasSubstr("[n/a]; wrote"));
  const std::string md = testing::read_file(dir / "out/psro.md");
  EXPECT_THAT(md, ::testing::Not(HasSubstr("nan")));
  EXPECT_THAT(md, HasSubstr("[n/a]"));
}

TEST(PsroCli, RunsAndRefusesBadOptions) {
  TempDir dir("psro-cli");
  const std::string config = psro_config(dir);
  const auto ok = testing::advplan("psro " + testing::quote(config) + " --iterations 1 --resamples 20 --red-k 8 "
                                   "--blue-budget 12 --progress none --out " + testing::quote(dir / "out"), dir);
  ASSERT_EQ(ok.status, 0) << ok.err;
  EXPECT_THAT(ok.err, HasSubstr("psro: 1 iterations; exploitability"));
  EXPECT_TRUE(fs::exists(dir.path() / "out" / "psro.md"));
  const auto bad = testing::advplan("psro " + testing::quote(config) + " --payoff wins --out " + testing::quote(dir / "o2"), dir);
  testing::expect_one_line_error(bad);
  EXPECT_THAT(bad.err, HasSubstr("--payoff wins: accepted values are advantage and win_rate"));
}

}  // namespace
}  // namespace advplan::metagame
