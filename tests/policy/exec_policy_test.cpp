// The exec: planning policy and its process pool (docs/POLICIES.md): the example programs give valid plans,
// every misbehaviour is a failure with its reason and the next request is served by a restarted program, the
// restart budget holds, a command that cannot start is refused up front, and a pool of workers gives the same
// results as one. Every test ends with no child process left, reaped or not.
#include "advplan/policy/exec_policy.hpp"

#include <dirent.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <string>

#include "advplan/core/error.hpp"
#include "advplan/core/validation.hpp"
#include "advplan/run/config.hpp"
#include "advplan/io/process_pool.hpp"
#include "advplan/policy/blue_policy.hpp"
#include "advplan/io/csv.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

using testing::kSource;
using testing::python;

std::string misbehaving() { return "exec:" + python() + " " + kSource + "/tests/data/misbehaving_policy.py"; }
std::string greedy() { return "exec:" + python() + " " + kSource + "/examples/policies/greedy_blue.py"; }

/// Processes whose parent is this test process, zombies included (from /proc/<pid>/stat).
int child_processes() {
  int n = 0;
  DIR* d = ::opendir("/proc");
  if (!d) return -1;
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::ifstream in(std::string("/proc/") + e->d_name + "/stat");
    std::string stat;
    std::getline(in, stat);
    const auto close = stat.rfind(')');  // the command name may hold spaces and parentheses
    if (close == std::string::npos) continue;
    // The guard (src/io/process_pool.cpp) is a child for the life of the process, by design: it ends the workers
    // should this process be killed.
    if (stat.find("(advplan-guard)") != std::string::npos) continue;
    char state = 0;
    long ppid = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %ld", &state, &ppid) == 2 && ppid == ::getpid()) ++n;
  }
  ::closedir(d);
  return n;
}

class ExecPolicyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cfg_ = new ExperimentConfig(default_experiment_config());
    corpus_ = new std::vector<Scenario>(generate_corpus(*cfg_));
  }
  static void TearDownTestSuite() {
    delete corpus_;
    delete cfg_;
  }
  void TearDown() override { EXPECT_EQ(child_processes(), 0) << "a child process was left behind"; }

  static const Scenario& scenario(const std::string& id) {
    for (const auto& s : *corpus_)
      if (s.id == id) return s;
    throw std::runtime_error("no scenario " + id);
  }
  static ExperimentConfig config(double timeout_s = 10, int max_restarts = 3, int workers = 1) {
    ExperimentConfig c = *cfg_;
    c.exec.timeout_s = timeout_s;
    c.exec.max_restarts = max_restarts;
    c.exec.workers = workers;
    return c;
  }
  static BluePlanResult plan(const BluePolicy& p, const Scenario& sc) {
    Rng rng = Rng::keyed(cfg_->seed, sc.id, "blue/" + p.label());
    return p.plan(sc, rng);
  }
  /// Scenarios spread over the corpus: every template, several seeds.
  static std::vector<const Scenario*> sample(std::size_t step) {
    std::vector<const Scenario*> out;
    for (std::size_t i = 0; i < corpus_->size(); i += step) out.push_back(&(*corpus_)[i]);
    return out;
  }

  static ExperimentConfig* cfg_;
  static std::vector<Scenario>* corpus_;
};
ExperimentConfig* ExecPolicyTest::cfg_ = nullptr;
std::vector<Scenario>* ExecPolicyTest::corpus_ = nullptr;

TEST_F(ExecPolicyTest, TrivialExampleAnswersWithTheFirstSeedPlan) {
  const std::string spec = "exec:python3 " + kSource + "/examples/policies/trivial_blue.py";
  auto p = make_blue_policy(spec, policy_context(config()));
  EXPECT_EQ(p->label(), spec);
  EXPECT_EQ(p->info().short_name, "exec");
  for (const Scenario* sc : sample(7)) {
    const auto r = plan(*p, *sc);
    ASSERT_TRUE(r.plan) << sc->id << ": " << r.failure;
    EXPECT_EQ(*r.plan, sc->blue_seed_plans.front()) << sc->id;
    EXPECT_EQ(r.contract.parsed, 1);
    EXPECT_EQ(r.contract.failed, 0);
  }
}

TEST_F(ExecPolicyTest, GreedyExampleBuildsItsOwnValidPlans) {
  auto p =
      make_blue_policy("exec:'" + python() + " " + kSource + "/examples/policies/greedy_blue.py'", policy_context(config()));
  std::set<Category> categories;
  for (const Scenario* sc : sample(5)) {
    const auto r = plan(*p, *sc);
    ASSERT_TRUE(r.plan) << sc->id << ": " << r.failure;
    EXPECT_TRUE(validate_plan(*r.plan, *sc, Side::Blue).empty()) << sc->id;
    EXPECT_EQ(r.plan->plan_id, sc->id + "/blue/greedy");
    EXPECT_EQ(r.plan->objective, sc->blue_objective);
    EXPECT_NE(*r.plan, sc->blue_seed_plans.front()) << sc->id;
    // Preparation first, an end-state step last, a sustainment step somewhere.
    const Action& first =
        r.plan->actions[static_cast<std::size_t>(r.plan->find_action(r.plan->chain.front()))];
    const Action& last = r.plan->actions[static_cast<std::size_t>(r.plan->find_action(r.plan->chain.back()))];
    EXPECT_EQ(first.category, Category::information) << sc->id;
    EXPECT_THAT((std::vector<std::string>{"hold", "withdraw", "return", "support", "mitigate"}),
                ::testing::Contains(last.verb))
        << sc->id;
    for (const auto& a : r.plan->actions) categories.insert(a.category);
    EXPECT_EQ(plan(*p, *sc).plan, r.plan) << sc->id << ": the same scenario must give the same plan";
  }
  EXPECT_GE(categories.size(), 6u);
}

TEST_F(ExecPolicyTest, EachMisbehaviourIsAFailureAndTheNextRequestSucceeds) {
  auto p = make_blue_policy(misbehaving(), policy_context(config(2.0, 20)));
  const auto* exec = dynamic_cast<const ExecPolicy*>(p.get());
  ASSERT_NE(exec, nullptr);
  const Scenario& good = scenario("urban-108");
  struct Case {
    int seed;
    std::string reason;  // a regular expression
    bool restarts;
  };
  const std::vector<Case> cases = {
      {100, R"(exec: invalid JSON in response: parse error at line 1, column \d+: .*)", true},
      {101, R"(exec: plan invalid: actions\[0\]\.asset: unknown asset "b-tank-9")", false},
      {102, R"(exec: request_id mismatch: sent (\d+), got (\d+))", true},
      {103, R"(exec: timeout after 2\.0 s)", true},
      {104, R"(exec: process exited with status 3)", true},
      {105, R"(exec: process killed by signal 11 \(SIGSEGV\))", true},
      {106, R"(exec: response exceeds 1048576 bytes)", true},
      {107, R"(exec: response has no "plan" field)", false},
      {109, R"(exec: the program wrote more than one line for one request)", true},
  };
  int expected_restarts = 0;
  for (const auto& c : cases) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto bad = plan(*p, scenario("urban-" + std::to_string(c.seed)));
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_FALSE(bad.plan) << c.seed;
    std::smatch m;
    EXPECT_TRUE(std::regex_match(bad.failure, m, std::regex(c.reason))) << c.seed << ": " << bad.failure;
    if (c.seed == 102 && m.size() == 3) {
      EXPECT_EQ(std::stoul(m[2]), std::stoul(m[1]) + 1000);
    }
    EXPECT_EQ(bad.contract.failed, 1) << c.seed;
    EXPECT_EQ(bad.contract.parsed, 0) << c.seed;
    EXPECT_LT(took, 5.0) << c.seed << ": a misbehaving program must not hold the run up";

    const auto next = plan(*p, good);
    ASSERT_TRUE(next.plan) << "after seed " << c.seed << ": " << next.failure;
    EXPECT_EQ(*next.plan, good.blue_seed_plans.front());
    expected_restarts += c.restarts ? 1 : 0;
    EXPECT_EQ(exec->restarts(), expected_restarts) << "after seed " << c.seed;
  }
}

TEST_F(ExecPolicyTest, RestartLimitCountsFailuresInARow) {
  auto p = make_blue_policy(misbehaving(), policy_context(config(10, 1)));
  const auto* exec = dynamic_cast<const ExecPolicy*>(p.get());
  const Scenario& good = scenario("maritime-108");
  const Scenario& exits = scenario("maritime-104");
  // A success between two failures refills the budget: a program that fails now and then keeps serving.
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(plan(*p, exits).failure, "exec: process exited with status 3") << round;
    EXPECT_TRUE(plan(*p, good).plan) << round;
  }
  EXPECT_EQ(exec->restarts(), 3);
  // max_restarts + 1 failures in a row: no more restarts.
  EXPECT_EQ(plan(*p, exits).failure, "exec: process exited with status 3");
  EXPECT_EQ(plan(*p, exits).failure, "exec: process exited with status 3");
  for (int i = 0; i < 2; ++i) {
    const auto r = plan(*p, good);
    EXPECT_FALSE(r.plan);
    EXPECT_EQ(r.failure, "exec: restart limit reached: the program failed 2 requests in a row (max_restarts 1)");
    EXPECT_EQ(r.contract.failed, 1);
  }
  EXPECT_EQ(exec->restarts(), 4);
}

TEST_F(ExecPolicyTest, ACommandThatCannotStartIsRefusedUpFront) {
  try {
    make_blue_policy("exec:/nonexistent/bin", policy_context(config()));
    FAIL() << "expected PolicyError";
  } catch (const PolicyError& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "exec command '/nonexistent/bin': cannot start: it exited with status 127 (command not found) before "
        "the first request (stderr: \"sh: 1: exec: /nonexistent/bin: not found\")");
  }
  try {
    make_blue_policy("exec:false", policy_context(config()));
    FAIL() << "expected PolicyError";
  } catch (const PolicyError& e) {
    EXPECT_STREQ(e.what(),
                 "exec command 'false': cannot start: it exited with status 1 before the first request");
  }
  try {
    make_blue_policy("exec:", policy_context(config()));
    FAIL() << "expected PolicyError";
  } catch (const PolicyError& e) {
    EXPECT_THAT(e.what(), HasSubstr("needs a command after 'exec:'"));
  }
}

TEST_F(ExecPolicyTest, QuotesAroundTheCommandAreDropped) {
  EXPECT_EQ(exec_command_of("exec:'python3 p.py'"), "python3 p.py");
  EXPECT_EQ(exec_command_of("exec: \"python3 p.py --x 'a b'\" "), "python3 p.py --x 'a b'");
  EXPECT_EQ(exec_command_of("exec:python3 p.py"), "python3 p.py");
}

TEST_F(ExecPolicyTest, WorkersServeConcurrentRequestsWithTheSameResults) {
  std::vector<const Scenario*> scs = sample(25);
  ASSERT_EQ(scs.size(), 6u);
  auto one = make_blue_policy(greedy(), policy_context(config(10, 3, 1)));
  auto two = make_blue_policy(greedy(), policy_context(config(10, 3, 2)));
  std::vector<BluePlanResult> serial(scs.size()), parallel(scs.size());
  for (std::size_t i = 0; i < scs.size(); ++i) serial[i] = plan(*one, *scs[i]);
  tbb::task_arena arena(2);
  arena.execute([&] {
    tbb::parallel_for(std::size_t{0}, scs.size(), [&](std::size_t i) { parallel[i] = plan(*two, *scs[i]); });
  });
  for (std::size_t i = 0; i < scs.size(); ++i) {
    ASSERT_TRUE(serial[i].plan) << serial[i].failure;
    EXPECT_EQ(serial[i].plan, parallel[i].plan) << scs[i]->id;
  }

  // Both workers take part: a slow answer (seeds >= 110) names the process that gave it.
  auto slow = make_blue_policy(misbehaving(), policy_context(config(10, 3, 2)));
  std::vector<std::string> ids(6);
  arena.execute([&] {
    tbb::parallel_for(std::size_t{0}, ids.size(), [&](std::size_t i) {
      const auto r = plan(*slow, scenario("humanitarian-" + std::to_string(110 + i)));
      ids[i] = r.plan ? r.plan->plan_id : r.failure;
    });
  });
  std::set<std::string> pids;
  for (const auto& id : ids) {
    ASSERT_THAT(id, HasSubstr("/pid-"));
    pids.insert(id.substr(id.find("/pid-")));
  }
  if (arena.max_concurrency() >= 2) {
    EXPECT_EQ(pids.size(), 2u);
  }
}

TEST_F(ExecPolicyTest, DestructionEndsAProgramThatIgnoresEndOfInput) {
  const auto t0 = std::chrono::steady_clock::now();
  {
    ProcessPoolOptions opt;
    opt.command = "sleep 30";
    opt.startup_check_s = 0.5;  // it never reads its input, so the start-up check waits its whole limit
    opt.workers = 2;
    ProcessPool pool(opt);
    EXPECT_EQ(child_processes(), 2);
  }
  EXPECT_EQ(child_processes(), 0);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 3.0);
}

TEST_F(ExecPolicyTest, PoolRejectsAResponseThroughItsCheckAndRestarts) {
  ProcessPoolOptions opt;
  opt.command = "cat";
  opt.max_response_bytes = 64;
  opt.timeout_s = 2;
  ProcessPool pool(opt);
  auto r = pool.request("hello");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(*r.line, "hello");
  r = pool.request("hello", [](const std::string& line) { return line == "hello" ? "rejected" : ""; });
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error, "rejected");
  EXPECT_EQ(pool.restarts(), 0);  // restarted lazily, on the next request
  r = pool.request(std::string(65, 'x'));
  EXPECT_EQ(r.error, "response exceeds 64 bytes");
  EXPECT_EQ(pool.restarts(), 1);
  r = pool.request("again");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(*r.line, "again");
  EXPECT_EQ(pool.restarts(), 2);
  EXPECT_EQ(pool.request("two\nlines").error, "request contains a newline");
}

TEST_F(ExecPolicyTest, AProgramDoesNotInheritTheLiveModelsKey) {
  // The program writes its whole environment at start, then serves requests as cat.
  testing::TempDir dir("exec-env");
  const std::string out = (dir.path() / "env.txt").string();
  const testing::EnvGuard key("ADVPLAN_LLM_API_KEY"), named("ADVPLAN_TEST_NAMED_KEY"), visible("ADVPLAN_TEST_VISIBLE");
  key.set("sk-default-secret");
  named.set("sk-named-secret");
  visible.set("visible");
  ExperimentConfig c = config();
  c.exec.withheld_env.push_back("ADVPLAN_TEST_NAMED_KEY");  // as llm.api_key_env: ADVPLAN_TEST_NAMED_KEY does
  { auto p = make_blue_policy("exec:env > " + out + "; exec cat", policy_context(c)); }
  const std::string env = testing::read_file(out);
  // Not printed on failure: the environment may hold the tester's own secrets.
  const auto has = [&](const char* s) { return env.find(s) != std::string::npos; };
  EXPECT_TRUE(has("ADVPLAN_TEST_VISIBLE=visible\n")) << "the rest of the environment passes";
  EXPECT_TRUE(has("ADVPLAN_POLICY_TOKEN="));
  EXPECT_FALSE(has("sk-default-secret")) << "ADVPLAN_LLM_API_KEY reached the program";
  EXPECT_FALSE(has("sk-named-secret")) << "the variable llm.api_key_env names reached the program";
}

TEST(ExecPolicyCli, NoProgramFindsTheKeyInAdvplansOwnEnvironment) {
  // advplan started with the keys in its environment: /proc/<advplan>/environ, which any program of the same user
  // can read, shows the environment a process was started with. The program records that and its own, then plans.
  testing::TempDir dir("exec-proc-env");
  const std::string seen = dir / "seen.txt", program = dir / "snoop.sh";
  testing::write_file(program, "#!/bin/sh\n{ tr '\\0' '\\n' < /proc/$PPID/environ; echo ==; env; } >> " +
                                   testing::quote(seen) + "\nexec " + testing::quote(python()) + " " +
                                   testing::quote(kSource + "/examples/policies/trivial_blue.py") + "\n");
  ASSERT_EQ(::chmod(program.c_str(), 0755), 0);
  const std::string config = testing::small_config(
      dir, {testing::seeds("[100, 100]"), {"api_key_env: ADVPLAN_LLM_API_KEY", "api_key_env: ADVPLAN_TEST_PROC_KEY"}});
  const auto r = testing::run_command(
      "ADVPLAN_LLM_API_KEY=sk-proc-default ADVPLAN_TEST_PROC_KEY=sk-proc-named " + testing::quote(testing::kBinary) +
          " evaluate --config " + testing::quote(config) + " --blue exec:" + testing::quote(program) +
          " --red single --no-reference --budget '' --rerun 0 --progress none --out " + testing::quote(dir / "run"),
      dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string text = testing::read_file(seen);
  // Not printed on failure: the environment may hold the tester's own secrets.
  const auto has = [&](const char* s) { return text.find(s) != std::string::npos; };
  ASSERT_TRUE(has("ADVPLAN_POLICY_TOKEN=")) << "the program did not record its environment";
  EXPECT_TRUE(has("\nADVPLAN_LLM_API_KEY=\n")) << "the variable itself stays, emptied, in the block /proc shows";
  EXPECT_FALSE(has("sk-proc-default")) << "ADVPLAN_LLM_API_KEY was readable";
  EXPECT_FALSE(has("sk-proc-named")) << "the variable llm.api_key_env names was readable";
}

TEST_F(ExecPolicyTest, PoolOptionsOutOfRangeAreRefused) {
  ProcessPoolOptions opt;
  opt.command = "cat";
  opt.workers = 0;
  try {
    ProcessPool pool(opt);
    FAIL() << "expected PolicyError";
  } catch (const PolicyError& e) {
    EXPECT_STREQ(e.what(), "exec command 'cat': workers must be at least 1, while 0 was given");
  }
}

// `red: "exec:CMD"` (the live-models issue, item 6): a RED policy from any language, with the BLUE plan in the
// request; its plan is validated as a RED plan and scored like any RED candidate. The example greedy_red.py answers
// every scenario; a program that answers with the BLUE plan fails each row as an invalid RED plan. The same bytes at
// one and two threads.
TEST(ExecRedPolicy, AProgramAnswersTheBluePlanAndItsPlansAreValidatedAsRed) {
  testing::TempDir dir("exec-red");
  const std::string example = std::string(ADVPLAN_SOURCE_DIR) + "/examples/policies/greedy_red.py";
  const std::string echo = dir / "echo_blue.py";
  testing::write_file(echo, "import json, sys\nfor line in sys.stdin:\n    r = json.loads(line)\n"
                            "    print(json.dumps({'request_id': r['request_id'], 'plan': r['blue_plan']}), flush=True)\n");
  const std::string cfg = dir / "red.yaml";
  testing::write_file(cfg, "name: red-exec\ncorpus: {templates: [urban, maritime, air-defense], seeds: [1, 4]}\n"
                           "conditions:\n  - {label: greedy_red, blue: seed, red: \"exec:python3 " + example + "\"}\n"
                           "  - {label: echo, blue: seed, red: \"exec:python3 " + echo + "\"}\n"
                           "simulator: {replications: 10}\nbootstrap: {resamples: 20}\n"
                           "studies: {rubric: false, framing: false, components: false}\n");
  for (const char* threads : {"1", "2"}) {
    const auto r = testing::run_command(testing::shell_quote(ADVPLAN_BINARY) + " run " + testing::shell_quote(cfg) +
                                            " --progress none --threads " + threads + " --out " +
                                            testing::shell_quote(dir / (std::string("run") + threads)),
                                        dir);
    ASSERT_EQ(r.status, 0) << r.err;
  }
  const io::CsvTable per = io::CsvTable::read(dir / "run1/per_scenario.csv");
  int ok = 0, invalid = 0;
  for (std::size_t i = 0; i < per.size(); ++i) {
    // The whole spec, so the two programs stay two RED policies (in the meta-game too).
    EXPECT_EQ(per.at(i, "red_policy"), per.at(i, "condition") == "echo" ? "exec:python3 " + echo : "exec:python3 " + example);
    if (per.at(i, "condition") == "greedy_red") {
      EXPECT_EQ(per.at(i, "status"), "ok") << per.at(i, "failure_reason");
      EXPECT_THAT(per.at(i, "red_plan_id"), ::testing::HasSubstr("/red/greedy_red"));
      ok += per.at(i, "status") == "ok";
    } else {
      EXPECT_EQ(per.at(i, "status"), "failed");
      EXPECT_THAT(per.at(i, "failure_reason"), ::testing::HasSubstr("red: exec: plan invalid:"));
      invalid += per.at(i, "status") == "failed";
    }
  }
  EXPECT_EQ(ok, 12);
  EXPECT_EQ(invalid, 12);
  EXPECT_EQ(testing::compare_runs(dir / "run1", dir / "run2"), "");
}

}  // namespace
}  // namespace advplan
