// Hostile input (the hardening issue): deeply nested JSON, oversized plans, policies that escape their
// process group, exit while a descendant holds their output, or fail on some scenarios; bounded parsing and
// excerpt helpers. Every test bounds its loops and waits, and ends with no child process left.
#include <dirent.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>

#include "advplan/core/plan_json.hpp"
#include "advplan/core/validation.hpp"
#include "advplan/run/config.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/io/process_pool.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/metrics/coherence.hpp"
#include "advplan/metrics/plan_layout.hpp"
#include "advplan/metrics/quality.hpp"
#include "advplan/policy/blue_policy.hpp"
#include "advplan/policy/exec_policy.hpp"
#include "advplan/policy/llm_contract.hpp"
#include "advplan/scenario/generator.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
using Clock = std::chrono::steady_clock;

using testing::kSource;
using testing::python;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string hostile(const std::string& args) {
  return "exec:" + python() + " " + kSource + "/tests/data/hostile_policy.py " + args;
}

bool alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  const auto close = stat.rfind(')');
  return close == std::string::npos || stat[close + 2] != 'Z';
}
pid_t read_pid(const std::string& file) {
  for (int i = 0; i < 500; ++i) {
    std::ifstream in(file);
    long pid = 0;
    if (in >> pid && pid > 0) return static_cast<pid_t>(pid);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}
/// Waits up to `limit` seconds for `pid` to be gone.
bool gone_within(pid_t pid, double limit) {
  const auto t0 = Clock::now();
  while (alive(pid)) {
    if (seconds_since(t0) > limit) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

std::string nested(std::size_t depth, const std::string& leaf) {
  return std::string(depth, '[') + leaf + std::string(depth, ']');
}

class HardeningTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cfg_ = new ExperimentConfig(default_experiment_config());
    corpus_ = new std::vector<Scenario>(generate_corpus(*cfg_));
  }
  static void TearDownTestSuite() {
    delete corpus_;
    delete cfg_;
  }
  static const Scenario& scenario(const std::string& id) {
    for (const auto& s : *corpus_)
      if (s.id == id) return s;
    throw std::runtime_error("no scenario " + id);
  }
  static ExperimentConfig config(double timeout_s = 5, int max_restarts = 3) {
    ExperimentConfig c = *cfg_;
    c.exec.timeout_s = timeout_s;
    c.exec.max_restarts = max_restarts;
    c.exec.workers = 1;
    return c;
  }
  static BluePlanResult plan(const BluePolicy& p, const Scenario& sc) {
    Rng rng = Rng::keyed(cfg_->seed, sc.id, "blue/" + p.label());
    return p.plan(sc, rng);
  }
  static ExperimentConfig* cfg_;
  static std::vector<Scenario>* corpus_;
};
ExperimentConfig* HardeningTest::cfg_ = nullptr;
std::vector<Scenario>* HardeningTest::corpus_ = nullptr;

// ---- 1. deeply nested JSON ------------------------------------------------------------------------------

TEST(FmtReal, IsFmtsFixedSixDecimalsOnEveryKindOfDouble) {
  // fmt_real formats with an integer fast path or std::to_chars; the oracle is fmt's "{:.6f}", which it replaced
  // (the same text in every trace). Values: halfway cases at the 7th decimal, tiny and huge magnitudes, random bit
  // patterns, continuous values, infinities.
  auto oracle = [](double v) {
    if (std::isnan(v)) return std::string();
    std::string s = fmt::format("{:.6f}", v == 0 ? 0.0 : v);
    return s == "-0.000000" ? std::string("0.000000") : s;
  };
  std::vector<double> values = {0.0,      -0.0,     0.5,       0.0000005, -0.0000005, 0.0000015, 2.5e-7,
                                1.0000005, 123.4564995, 1e-320, 1e300, -1e300, 1.7976931348623157e308,
                                std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                                std::nan("")};
  std::mt19937_64 g(42);
  for (int i = 0; i < 20000; ++i) {
    const std::uint64_t bits = g();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    values.push_back(v);
    values.push_back(static_cast<double>(g() % 2000001) / 2000000.0 - 0.5);  // [−.5, .5] on a 7th-decimal grid
    values.push_back(std::ldexp(static_cast<double>(g() >> 11), -53) * 200.0 - 100.0);  // continuous in [−100, 100)
    values.push_back(std::ldexp(static_cast<double>(g() >> 11), -53));                  // continuous in [0, 1)
    values.push_back(static_cast<double>(g() % 100000000) / 1e8 + 5e-7);  // near the half at the 7th decimal
  }
  for (double v : values) ASSERT_EQ(io::fmt_real(v), oracle(v)) << fmt::format("{:a}", v);
}

TEST(CsvOutput, QuotesWhatNeedsQuotingAndRepairsIllFormedUtf8) {
  io::CsvTable t({"a", "b", "c", "d", "e", "f", "g"});
  t.add({"plain-1.5", "x,y", "say \"hi\"", "two\nlines", "caf\xe9", "caf\xc3\xa9", "cr\r"});
  EXPECT_EQ(t.to_string(), "a,b,c,d,e,f,g\nplain-1.5,\"x,y\",\"say \"\"hi\"\"\",\"two\nlines\",caf\xEF\xBF\xBD,"
                           "caf\xc3\xa9,\"cr\r\"\n");
}

TEST(CsvOutput, ASpecialByteIsFoundAtEveryPositionOfLongAndShortCells) {
  // Cells are scanned sixteen bytes at a time, then byte by byte (src/io/csv.cpp plain_cell): a comma, a quote, a
  // line break or an ill-formed byte anywhere in a cell of any length must still be seen.
  for (std::size_t len = 1; len <= 40; ++len)
    for (std::size_t at = 0; at < len; ++at)
      for (const char special : {',', '"', '\n', '\r', '\xe9'}) {
        std::string cell(len, 'x');
        cell[at] = special;
        std::string out;
        io::append_csv_row(out, {std::string_view(cell)});
        if (special == '\xe9') {
          std::string want = cell;
          want.replace(at, 1, "\xEF\xBF\xBD");  // U+FFFD for the ill-formed byte
          ASSERT_EQ(out, want + "\n") << len << " " << at;
        } else {
          ASSERT_EQ(out.front(), '"') << len << " " << at << " " << int(special);
        }
        std::string plain(len, 'y');
        out.clear();
        io::append_csv_row(out, {std::string_view(plain)});
        ASSERT_EQ(out, plain + "\n");
      }
}

TEST(CsvOutput, RowsFromViewsAreRowsFromStrings) {
  const std::vector<std::string> cells{"plain-1.5", "x,y", "say \"hi\"", "two\nlines", "caf\xe9", "", "cr\r"};
  std::string from_strings, from_views;
  io::append_csv_row(from_strings, cells);
  io::append_csv_row(from_views, {cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], cells[6]});
  EXPECT_EQ(from_views, from_strings);
}

// CsvTable::parse takes an unquoted field's characters as one run; the reference is the character-at-a-time
// reading it replaced (a quote opens a quoted field only as a field's first character, '\r' outside quotes is
// dropped), over random texts of the characters that matter.
TEST(CsvInput, ParsesAsTheCharacterAtATimeReader) {
  auto reference = [](const std::string& text, bool& unclosed) {
    std::vector<std::vector<std::string>> records;
    std::vector<std::string> row;
    std::string field;
    bool quoted = false, started = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (quoted) {
        if (c == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            field += '"';
            ++i;
          } else {
            quoted = false;
          }
        } else {
          field += c;
        }
        continue;
      }
      if (c == '"' && !started) {
        quoted = started = true;
      } else if (c == ',') {
        row.push_back(std::move(field));
        field.clear();
        started = false;
      } else if (c == '\n') {
        row.push_back(std::move(field));
        field.clear();
        started = false;
        records.push_back(std::move(row));
        row.clear();
      } else if (c != '\r') {
        field += c;
        started = true;
      }
    }
    unclosed = quoted;
    return records;
  };
  std::mt19937_64 g(5);
  const std::string alphabet = "ab\",\r\n\"x,";
  std::size_t parsed = 0;
  for (int t = 0; t < 20000; ++t) {
    std::string text = "h1,h2,h3\n";
    const std::size_t len = g() % 40;
    for (std::size_t i = 0; i < len; ++i) text += alphabet[g() % alphabet.size()];
    text += '\n';
    bool unclosed = false;
    const auto want = reference(text, unclosed);
    bool ok_shape = !want.empty();
    for (std::size_t r = 1; r < want.size(); ++r) ok_shape = ok_shape && want[r].size() == 3;
    try {
      const io::CsvTable got = io::CsvTable::parse(text, "random.csv");
      ASSERT_TRUE(ok_shape) << text;
      ASSERT_EQ(got.header(), want.front()) << text;
      ASSERT_EQ(got.size(), want.size() - 1) << text;
      for (std::size_t r = 0; r < got.size(); ++r) ASSERT_EQ(got.rows()[r], want[r + 1]) << text;
      ++parsed;
    } catch (const CsvError&) {
      // Only a field count that differs from the header's, or an unclosed quote, is an error.
      ASSERT_TRUE(!ok_shape || unclosed) << text;
    }
  }
  EXPECT_GT(parsed, 500u);  // the comparison ran on many texts (about 700 of 20,000 have three fields per row)
}

TEST(BoundedJson, DepthIsCheckedBeforeParsing) {
  EXPECT_EQ(untrusted::json_depth_error(nested(64, "1")), "");
  EXPECT_EQ(untrusted::json_depth_error(nested(65, "1")), "JSON nests deeper than 64 levels");
  // Brackets inside strings do not count; escaped quotes do not end a string.
  EXPECT_EQ(untrusted::json_depth_error("[\"" + std::string(500, '[') + "\\\"\"]"), "");
  json j;
  EXPECT_EQ(untrusted::parse_json_bounded(nested(40000, "1"), j), "JSON nests deeper than 64 levels");
  EXPECT_TRUE(j.is_discarded());
  EXPECT_EQ(untrusted::parse_json_bounded("{\"a\": [1, 2]}", j), "");
  EXPECT_EQ(j["a"][1], 2);
  EXPECT_EQ(untrusted::parse_json_bounded("{\"a\": ", j), "invalid JSON at byte 7");
}

TEST(BoundedJson, ADeepPlanIsAViolationNotACrash) {
  const Scenario sc = testing::tiny_scenario();
  json p = to_json(sc.blue_seed_plans.empty() ? testing::make_plan("Secure the bridge", {}, {}) : sc.blue_seed_plans[0]);
  std::string text = p.dump();
  const auto at = text.find("\"chain\"");
  text.insert(at, "\"roles\": {\"x\": " + nested(40000, "1") + "}, ");
  const PlanParse r = parse_plan_text(text, sc);
  ASSERT_FALSE(r.violations.empty());
  EXPECT_EQ(r.violations.front().str(), "JSON nests deeper than 64 levels");

  // A value built by some other path is checked at the decoder's entry.
  json deep = json::parse(nested(2000, "1"));  // deep enough for the limit; a 40,000-deep DOM overflows a sanitizer stack in its destructor
  json plan = p;
  plan["actions"] = json::array({{{"id", "a1"}, {"metadata", {{"m", deep}}}}});
  std::vector<Violation> v;
  EXPECT_FALSE(plan_from_json(plan, v));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].str(), "the plan nests deeper than 64 levels");
}

TEST(BoundedJson, ADeepCompletionIsAnInvalidPlan) {
  const Scenario sc = testing::tiny_scenario();
  const CompletionParse p = parse_completion("{\"plan\": " + nested(40000, "1") + "}", sc, Side::Blue);
  EXPECT_FALSE(p.parse.ok());
  EXPECT_THAT(p.parse.summary(), HasSubstr("deeper than 64 levels"));
  // Inside prose, the repair path gets the same limit.
  const CompletionParse q = parse_completion("Here: {" + nested(40000, "1") + "} done", sc, Side::Blue);
  EXPECT_FALSE(q.parse.ok());
}

TEST_F(HardeningTest, DeepPolicyRepliesAreFailuresWithShortReasons) {
  const Scenario& sc = scenario("urban-100");
  for (const std::string mode : {"deep", "deep-id", "deep-error"}) {
    auto p = make_blue_policy(hostile(mode), policy_context(config()));
    const auto r = plan(*p, sc);
    EXPECT_FALSE(r.plan) << mode;
    EXPECT_THAT(r.failure, HasSubstr("deeper than 64 levels")) << mode;
    EXPECT_LT(r.failure.size(), 300u) << mode;
  }
}

TEST(Excerpt, IsShortOneLineAndValidUtf8) {
  EXPECT_EQ(untrusted::excerpt("a\nb\tc"), "a b c");
  EXPECT_EQ(untrusted::excerpt(std::string(500, 'x'), 10), std::string(10, 'x') + "...");
  EXPECT_EQ(untrusted::excerpt("caf\xe9"), "caf\xEF\xBF\xBD");
  // A cut never splits a character.
  EXPECT_EQ(untrusted::excerpt("\xC3\xA9\xC3\xA9", 3), "\xC3\xA9...");
  EXPECT_TRUE(untrusted::valid_utf8(untrusted::excerpt(std::string("\xff\xfe\xC3", 3) + std::string(300, 'a'))));
  EXPECT_EQ(untrusted::first_invalid_utf8("ok \xC3\xA9 \xe9"), 6u);
  EXPECT_EQ(untrusted::first_invalid_utf8("\xED\xA0\x80"), 0u);  // a UTF-16 surrogate is not UTF-8
  EXPECT_EQ(untrusted::redact("key sk-1 and sk-1", "sk-1"), "key [redacted] and [redacted]");
  EXPECT_EQ(untrusted::safe_path_component("../.."), ".._..");
  EXPECT_EQ(untrusted::safe_path_component(".."), "_..");
  EXPECT_EQ(untrusted::safe_path_component("/etc/passwd"), "_etc_passwd");
  EXPECT_EQ(untrusted::safe_path_component(""), "_");
  EXPECT_EQ(untrusted::safe_path_component("urban"), "urban");
}

// ---- 8. plan size cap and near-linear coverage -----------------------------------------------------------

/// The plain double loop that coverage() replaced: the reference its results must equal bit for bit.
std::vector<double> coverage_reference(const std::vector<PlacedAction>& layout) {
  const auto prot = [](const Action& a) {
    return a.category == Category::protection || a.category == Category::deception;
  };
  std::vector<double> cov(layout.size(), 0.0);
  for (std::size_t i = 0; i < layout.size(); ++i) {
    const auto& a = layout[i];
    double s = 0;
    for (std::size_t j = 0; j < layout.size(); ++j) {
      if (j == i) continue;
      const auto& b = layout[j];
      if (!prot(*b.action) || b.position > a.position) continue;
      if (!b.in_chain && !a.in_chain && (b.branch != a.branch || b.option != a.option)) continue;
      if (!b.in_chain && a.in_chain && b.position >= a.position) continue;
      const bool close = b.action->target == a.action->target || b.action->asset == a.action->asset;
      s += (close ? 1.0 : 0.5) * (!b.in_chain && a.in_chain ? b.weight : 1.0);
    }
    cov[i] = std::min(1.0, s);
  }
  return cov;
}

TEST(Coverage, EqualsThePlainDoubleLoopBitForBit) {
  std::mt19937 gen(7);
  const Scenario sc = testing::tiny_scenario();
  const std::vector<Category> cats = {Category::protection, Category::deception, Category::movement,
                                      Category::fires, Category::information};
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + static_cast<int>(gen() % 40);
    std::vector<Action> acts;
    for (int k = 0; k < n; ++k)
      acts.push_back(testing::act("a" + std::to_string(k), "b" + std::to_string(gen() % 3 + 1), "hold",
                                  cats[gen() % cats.size()], "t" + std::to_string(gen() % 4), 3));
    std::vector<std::string> chain;
    std::vector<Branch> branches;
    int k = 0;
    for (; k < n / 2 + 1 && k < n; ++k) chain.push_back(acts[static_cast<std::size_t>(k)].id);
    while (k < n) {
      Branch b;
      b.at = chain[gen() % chain.size()];
      const int opts = 2 + static_cast<int>(gen() % 5);
      for (int o = 0; o < opts && k < n; ++o) {
        std::vector<std::string> opt;
        const int len = 1 + static_cast<int>(gen() % 3);
        for (int m = 0; m < len && k < n; ++m) opt.push_back(acts[static_cast<std::size_t>(k++)].id);
        b.options.push_back(opt);
      }
      branches.push_back(b);
    }
    const Plan p = testing::make_plan("Secure the bridge", acts, chain, branches);
    const auto layout = layout_plan(p, sc);
    const auto got = coverage(layout), want = coverage_reference(layout);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(double)), 0) << "trial " << trial << " action " << i;
  }
}

Plan long_plan(std::size_t n) {
  std::vector<Action> acts;
  std::vector<std::string> chain;
  for (std::size_t k = 0; k < n; ++k) {
    acts.push_back(testing::act(fmt::format("a{}", k), "b1", k % 2 ? "harden" : "transit",
                                k % 2 ? Category::protection : Category::movement, fmt::format("t{}", k), 3));
    chain.push_back(acts.back().id);
  }
  return testing::make_plan("Secure the bridge and hold the market", acts, chain);
}

TEST(PlanSize, APlanOverTheCapIsRefusedWithASentence) {
  const Scenario sc = testing::tiny_scenario();
  const std::string over = to_json(long_plan(untrusted::kMaxPlanActions + 1)).dump();
  const auto t0 = Clock::now();
  const PlanParse r = parse_plan_text(over, sc);
  EXPECT_LT(seconds_since(t0), 1.0);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].str(), "actions: the plan has 1001 actions; at most 1000 are accepted");
  json chain_only = to_json(long_plan(3));
  for (int i = 0; i < 2000; ++i) chain_only["chain"].push_back("a0");
  EXPECT_EQ(parse_plan_text(chain_only.dump(), sc).violations.at(0).str(),
            "chain: the plan has 2003 steps; at most 1000 are accepted");
}

TEST(PlanSize, ScoringAPlanAtTheCapIsFast) {
  const Scenario sc = testing::tiny_scenario();
  const Plan p = long_plan(untrusted::kMaxPlanActions);
  const auto t0 = Clock::now();
  const auto layout = layout_plan(p, sc);
  const auto q = quality(layout, sc, Side::Blue, QualityWeights{});
  const auto d = coherence(p, layout, sc);
  EXPECT_LT(seconds_since(t0), 1.0);
  EXPECT_GE(q.q, 0.0);
  EXPECT_GE(d.D, 0.0);
}

// ---- 11. process groups, escaped descendants, exit reported as an exit -----------------------------------

TEST_F(HardeningTest, ADetachedGrandchildEndsWithThePool) {
  testing::TempDir tmp("escape");
  const std::string pidfile = tmp / "grandchild.pid";
  pid_t grandchild = -1;
  {
    auto p = make_blue_policy(hostile("escape " + pidfile), policy_context(config()));
    grandchild = read_pid(pidfile);
    ASSERT_GT(grandchild, 0);
    EXPECT_TRUE(alive(grandchild));
    EXPECT_TRUE(plan(*p, scenario("urban-101")).plan);
  }
  EXPECT_TRUE(gone_within(grandchild, 3.0)) << "the setsid grandchild outlived the run";
}

TEST_F(HardeningTest, AnExitIsReportedAsAnExitWhileADescendantHoldsTheOutput) {
  testing::TempDir tmp("exit");
  const std::string pidfile = tmp / "grandchild.pid";
  auto p = make_blue_policy(hostile("exit-holding " + pidfile), policy_context(config(20)));
  const auto t0 = Clock::now();
  const auto r = plan(*p, scenario("urban-101"));
  EXPECT_EQ(r.failure, "exec: process exited with status 4");
  EXPECT_LT(seconds_since(t0), 10.0) << "an exit must not wait for the timeout";
  const pid_t grandchild = read_pid(pidfile);
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(gone_within(grandchild, 3.0)) << "the failed worker's descendants must be ended";
}

// ---- 12. restarts are a budget of failures in a row --------------------------------------------------------

TEST_F(HardeningTest, APolicyFailingOneScenarioInFiveKeepsServingTheOthers) {
  auto p = make_blue_policy(hostile("one-in-five"), policy_context(config(5, 3)));
  int failures = 0, plans = 0;
  for (int seed = 100; seed < 120; ++seed) {
    const auto r = plan(*p, scenario("urban-" + std::to_string(seed)));
    if (seed % 5 == 0) {
      EXPECT_FALSE(r.plan);
      EXPECT_THAT(r.failure, HasSubstr("invalid JSON in response")) << seed;
      ++failures;
    } else {
      EXPECT_TRUE(r.plan) << seed << ": " << r.failure;
      plans += r.plan ? 1 : 0;
    }
  }
  EXPECT_EQ(failures, 4);
  EXPECT_EQ(plans, 16);
  EXPECT_EQ(dynamic_cast<const ExecPolicy&>(*p).restarts(), 4);
}

TEST_F(HardeningTest, AProgramThatAlwaysFailsStopsAfterTheBudgetInARow) {
  auto p = make_blue_policy(hostile("latin1"), policy_context(config(5, 2)));
  const Scenario& sc = scenario("urban-101");
  for (int i = 0; i < 3; ++i) {
    const auto r = plan(*p, sc);
    // A reply with an error field is answered (no restart): the Latin-1 bytes fail the JSON parse.
    EXPECT_THAT(r.failure, HasSubstr("invalid JSON in response")) << i;
    EXPECT_TRUE(untrusted::valid_utf8(r.failure)) << r.failure;
  }
  const auto last = plan(*p, sc);
  EXPECT_EQ(last.failure,
            "exec: restart limit reached: the program failed 3 requests in a row (max_restarts 2)");
}

TEST_F(HardeningTest, StartUpCheckWaitsForTheProgramToReadItsInput) {
  // A program that takes a while to start and then fails is refused up front, whatever the machine's load.
  ProcessPoolOptions opt;
  opt.command = "sleep 0.6; exit 5";
  const auto t0 = Clock::now();
  try {
    ProcessPool pool(opt);
    FAIL() << "expected PolicyError";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("exited with status 5 before the first request"));
  }
  EXPECT_LT(seconds_since(t0), 5.0);
  // A program waiting for input is ready at once.
  opt.command = "cat";
  const auto t1 = Clock::now();
  ProcessPool pool(opt);
  EXPECT_LT(seconds_since(t1), 2.0);
  EXPECT_EQ(pool.request("x").line.value_or(""), "x");
}

}  // namespace
}  // namespace advplan
