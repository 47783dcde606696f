// advplan play's library side (play/play.hpp, docs/PLAY.md): the seat, the book of plans in the output
// directory, the validator's messages, and the page's requests with their hostile bodies.
#include "advplan/play/play.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "advplan/core/error.hpp"
#include "advplan/core/plan_json.hpp"
#include "advplan/io/played_plans.hpp"
#include "support/cli.hpp"
#include "support/raw_http.hpp"

namespace advplan {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

constexpr const char* kToken = "0123456789abcdef0123456789abcdef";

/// tests/data/small.yaml with one template and three seeds: three scenarios.
ExperimentConfig three_scenarios(const TempDir& dir) {
  return load_experiment_config(testing::small_config(
      dir, {{"templates: [urban, air-defense]", "templates: [urban]"}, testing::seeds("[100, 102]")}));
}

io::LocalRequest request(const std::string& method, const std::string& path, std::string body = "",
                         std::vector<io::http::HeaderField> headers = {}) {
  io::LocalRequest r;
  r.head.method = method;
  r.head.path = path;
  r.head.target = path;
  r.head.headers = std::move(headers);
  r.body = std::move(body);
  return r;
}

std::string body_of_plan(const Scenario& sc, const Plan& plan) {
  nlohmann::json j;
  j["scenario_id"] = sc.id;
  j["plan"] = to_json(plan);
  return j.dump();
}

TEST(PlaySeat, BlueTakesTheDefaultBlueSeatAndRedAddsTheHumanCondition) {
  TempDir dir("play-seat");
  const ExperimentConfig cfg = three_scenarios(dir);
  const ExperimentConfig blue = play::seated_config(cfg, Side::Blue, "plans:x.jsonl");
  EXPECT_EQ(blue.default_blue, "plans:x.jsonl");
  EXPECT_EQ(blue.budget_blue, "plans:x.jsonl");
  ASSERT_EQ(blue.conditions.size(), cfg.conditions.size());
  for (std::size_t i = 0; i < cfg.conditions.size(); ++i) {
    EXPECT_EQ(blue.conditions[i].label, cfg.conditions[i].label);
    EXPECT_EQ(blue.conditions[i].blue,
              cfg.conditions[i].blue == "seed" ? "plans:x.jsonl" : cfg.conditions[i].blue);
  }
  const ExperimentConfig red = play::seated_config(cfg, Side::Red, "plans:x.jsonl");
  ASSERT_EQ(red.conditions.size(), cfg.conditions.size() + 2)
      << "seed and the council meet the person's plan";
  const Condition& first = red.conditions[cfg.conditions.size()];
  EXPECT_EQ(first.label, "human");
  EXPECT_EQ(first.blue, "seed");
  EXPECT_EQ(first.red, "plans:x.jsonl");
  EXPECT_EQ(red.conditions.back().label, "council vs human");
  EXPECT_EQ(red.conditions.back().blue, "council");
  EXPECT_THROW((void)play::seated_config(red, Side::Red, "plans:y.jsonl"), ConfigError);
}

TEST(PlayBook, KeepsThePlansAsAPlanSetAndResumesFromThem) {
  TempDir dir("play-book");
  const ExperimentConfig cfg = three_scenarios(dir);
  const std::string out = dir / "sitting";
  {
    play::PlaySession s(cfg, Side::Blue, out);
    ASSERT_EQ(s.total(), 3u);
    ASSERT_EQ(s.current(), 0u);
    const Scenario& sc = s.scenario(0);
    EXPECT_TRUE(s.submit(sc.id, plan_to_string(sc.blue_seed_plans.front())).empty());
    EXPECT_EQ(s.current(), 1u);
  }
  const auto lines = read_played_plans(dir / "sitting/played.jsonl");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].side, Side::Blue);
  EXPECT_EQ(lines[0].policy, "human");
  const std::string times = testing::read_file(dir / "sitting/play_times.csv");
  EXPECT_EQ(times.rfind("scenario_id,seconds\nurban-100,", 0), 0u) << times;
  play::PlaySession again(cfg, Side::Blue, out);
  EXPECT_EQ(again.played(), 1u);
  EXPECT_EQ(again.current(), 1u) << "a new sitting continues at the first unplayed scenario";
  EXPECT_THROW(play::PlaySession(cfg, Side::Red, out), IoError) << "a BLUE sitting is not continued as RED";
}

TEST(PlayBook, RecordsTheTimeFromTheStateThatShowedTheScenario) {
  TempDir dir("play-time");
  const ExperimentConfig cfg = three_scenarios(dir);
  play::PlaySession s(cfg, Side::Blue, dir / "sitting");
  auto t = std::chrono::steady_clock::time_point{};
  s.set_clock([&t] { return t; });
  (void)s.state_json();
  t += std::chrono::milliseconds(12'345);
  ASSERT_TRUE(s.submit(s.scenario(0).id, plan_to_string(s.scenario(0).blue_seed_plans.front())).empty());
  EXPECT_EQ(testing::read_file(dir / "sitting/play_times.csv"), "scenario_id,seconds\nurban-100,12.345\n");
}

TEST(PlayBook, NeverRenamesOverANonRegularFileNorWritesOutsideItsDirectory) {
  TempDir dir("play-links");
  const ExperimentConfig cfg = three_scenarios(dir);
  const std::string out = dir / "sitting";
  fs::create_directories(out);
  testing::write_file(dir / "elsewhere.csv", "untouched\n");
  fs::create_symlink(dir / "elsewhere.csv", out + "/play_times.csv");
  EXPECT_THROW(play::PlaySession(cfg, Side::Blue, out), IoError)
      << "a link in the book's place is not read through";
  fs::remove(out + "/play_times.csv");
  play::PlaySession s(cfg, Side::Blue, out);
  fs::create_symlink(dir / "elsewhere.csv", out + "/play_times.csv");  // made during the sitting
  const Scenario& sc = s.scenario(0);
  EXPECT_THROW((void)s.submit(sc.id, plan_to_string(sc.blue_seed_plans.front())), IoError);
  EXPECT_EQ(testing::read_file(dir / "elsewhere.csv"), "untouched\n");
  EXPECT_TRUE(fs::is_symlink(out + "/play_times.csv"));
  testing::write_file(dir / "file", "x");
  EXPECT_THROW(play::PlayBook(dir / "file", Side::Blue), IoError) << "--out is a file";
}

TEST(PlayMessages, AreTheValidatorsOneSentenceEach) {
  TempDir dir("play-messages");
  const ExperimentConfig cfg = three_scenarios(dir);
  const Scenario sc = corpus_scenario(cfg, 0);
  EXPECT_TRUE(play::plan_messages(plan_to_string(sc.blue_seed_plans.front()), sc, Side::Blue).empty());
  Plan bad = sc.blue_seed_plans.front();
  bad.actions[0].asset = "nobody";
  const auto m = play::plan_messages(plan_to_string(bad), sc, Side::Blue);
  ASSERT_FALSE(m.empty());
  EXPECT_NE(m.front().find("actions[0].asset"), std::string::npos) << m.front();
  EXPECT_FALSE(play::plan_messages(plan_to_string(sc.blue_seed_plans.front()), sc, Side::Red).empty());
  EXPECT_FALSE(play::plan_messages("{", sc, Side::Blue).empty());
  EXPECT_FALSE(play::plan_messages(std::string(40, '[') + std::string(40, ']'), sc, Side::Blue).empty());
}

class PlayRequests : public ::testing::Test {
 protected:
  PlayRequests()
      : dir_("play-requests"), cfg_(three_scenarios(dir_)), s_(cfg_, Side::Blue, dir_ / "sitting") {}
  io::LocalResponse ask(const io::LocalRequest& r) { return play::answer_play_request(s_, kToken, r); }
  std::string at(const std::string& file) const { return fmt::format("/{}/{}", kToken, file); }
  TempDir dir_;
  ExperimentConfig cfg_;
  play::PlaySession s_;
};

TEST_F(PlayRequests, ServeThePageAndTheStateUnderTheTokenOnly) {
  EXPECT_EQ(ask(request("GET", at(""))).status, 200);
  EXPECT_EQ(ask(request("GET", at("play.js"))).content_type, "text/javascript; charset=utf-8");
  const auto state = nlohmann::json::parse(ask(request("GET", at("state"))).body);
  EXPECT_EQ(state["side"], "BLUE");
  EXPECT_EQ(state["total"], 3);
  EXPECT_EQ(state["scenario"]["id"], "urban-100");
  for (const std::string& bad : std::vector<std::string>{
           "/", "/state", "/0123456789abcdef0123456789abcdee/state", "/x/" + std::string(kToken) + "/"}) {
    const auto r = ask(request("GET", bad));
    EXPECT_EQ(r.status, 403) << bad;
    EXPECT_EQ(r.body.find(kToken), std::string::npos);
  }
  EXPECT_EQ(ask(request("GET", at("../played.jsonl"))).status, 404);
  EXPECT_EQ(ask(request("POST", at("state"), "{}")).status, 404);
}

TEST(PlayState, AsRedShowsTheDefaultBluePlanItAnswersAndTakesARedPlan) {
  TempDir dir("play-red");
  const ExperimentConfig cfg = three_scenarios(dir);
  play::PlaySession s(cfg, Side::Red, dir / "sitting");
  const auto state = nlohmann::json::parse(s.state_json());
  EXPECT_EQ(state["side"], "RED");
  EXPECT_EQ(state["opponent_policy"], "seed");
  // The seed policy plays the scenario's first seed plan: the plan the run's BLUE makes.
  EXPECT_EQ(state["opponent"], to_json(s.scenario(0).blue_seed_plans.front()));
  EXPECT_FALSE(state["scenario"].contains("blue_seed_plans") &&
               !state["scenario"]["blue_seed_plans"].empty());
  EXPECT_FALSE(s.submit(s.scenario(0).id, plan_to_string(s.scenario(0).blue_seed_plans.front())).empty())
      << "a BLUE plan in RED's seat";
}

TEST_F(PlayRequests, RefuseHostileBodiesInOneSentence) {
  const std::string deep =
      R"({"scenario_id": "urban-100", "plan": )" + std::string(40, '[') + std::string(40, ']') + "}";
  for (const std::string& body :
       {std::string("not json"), std::string("[1, 2]"), std::string(R"({"plan": {}})"),
        std::string(R"({"scenario_id": 7, "plan": {}})"), deep, std::string("\xff\xfe")}) {
    for (const char* file : {"validate", "submit"}) {
      const auto r = ask(request("POST", at(file), body));
      EXPECT_EQ(r.status, 400) << file << " " << body;
      EXPECT_EQ(std::count(r.body.begin(), r.body.end(), '\n'), 1) << r.body;
      EXPECT_EQ(r.body.back(), '\n') << "one sentence, one line";
    }
  }
  const auto cross =
      ask(request("POST", at("submit"), body_of_plan(s_.scenario(0), s_.scenario(0).blue_seed_plans[0]),
                  {{"sec-fetch-site", "cross-site"}}));
  EXPECT_EQ(cross.status, 403);
  EXPECT_EQ(s_.played(), 0u);
}

TEST_F(PlayRequests, ValidateAsThePersonTypesAndSubmitMovesOn) {
  const Scenario& sc = s_.scenario(0);
  Plan bad = sc.blue_seed_plans.front();
  bad.chain.push_back("a99");
  const auto v = nlohmann::json::parse(ask(request("POST", at("validate"), body_of_plan(sc, bad))).body);
  ASSERT_FALSE(v["messages"].empty());
  const auto refused = ask(request("POST", at("submit"), body_of_plan(sc, bad)));
  EXPECT_EQ(refused.status, 422);
  EXPECT_EQ(s_.played(), 0u);
  const auto ok = nlohmann::json::parse(
      ask(request("POST", at("validate"), body_of_plan(sc, sc.blue_seed_plans[0]))).body);
  EXPECT_TRUE(ok["messages"].empty());
  const auto next = ask(request("POST", at("submit"), body_of_plan(sc, sc.blue_seed_plans[0])));
  ASSERT_EQ(next.status, 200) << next.body;
  EXPECT_EQ(nlohmann::json::parse(next.body)["scenario"]["id"], "urban-101");
  const auto stale = ask(request("POST", at("submit"), body_of_plan(sc, sc.blue_seed_plans[0])));
  EXPECT_EQ(stale.status, 422) << "a plan for a scenario already played";
  EXPECT_EQ(s_.played(), 1u);
}

TEST_F(PlayRequests, OverTheServerCheckTheHostAndBoundTheBody) {
  const testing::ServerThread server(play::play_server_options(0), [this](const io::LocalRequest& r) {
    return play::answer_play_request(s_, kToken, r);
  });
  const int port = server.port();
  const std::string host = "Host: 127.0.0.1:" + std::to_string(port) + "\r\n";
  EXPECT_EQ(testing::status_of(testing::exchange(port, testing::get_request(port, at("state")))), 200);
  EXPECT_EQ(
      testing::status_of(testing::exchange(
          port, "GET " + at("state") + " HTTP/1.1\r\nHost: evil.test:" + std::to_string(port) + "\r\n\r\n")),
      421);
  const std::string big(play::kMaxBodyBytes + 1, ' ');
  const std::string post = "POST " + at("submit") + " HTTP/1.1\r\n" + host +
                           "Content-Type: application/json\r\nContent-Length: " + std::to_string(big.size()) +
                           "\r\n\r\n";
  EXPECT_EQ(testing::status_of(testing::exchange(port, post + big)), 413);
}

}  // namespace
}  // namespace advplan
