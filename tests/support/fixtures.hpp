#pragma once
// Shared test fixtures: a tiny hand-made scenario whose numbers are easy to work by hand (metrics/metrics_test.cpp,
// core/validation_test.cpp), a plan builder, the paper config, a scoped temporary directory and environment
// variable, and whole-file reads and writes. The helpers for tests that run the `advplan` executable are in
// support/cli.hpp.
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

#include "advplan/core/plan.hpp"
#include "advplan/core/scenario.hpp"
#include "advplan/run/config.hpp"

namespace advplan::testing {

inline Asset make_asset(std::string id, Side side, double capability, double cost, double mobility,
                        std::vector<Category> cats) {
  Asset a;
  a.id = std::move(id);
  a.side = side;
  a.type = "unit";
  a.domain = "land";
  a.role = "role";
  a.capability = capability;
  a.cost = cost;
  a.mobility = mobility;
  a.categories = std::move(cats);
  return a;
}

/// The tiny scenario. Every number below is used in the hand calculations of metrics/metrics_test.cpp.
///   BLUE b1: capability .5, cost 2, mobility .5      BLUE b2: capability .8, cost 4, mobility 1
///   BLUE b3: capability 1,  cost 1, mobility 0       RED  r1: capability .6, cost 1, mobility .5
///   terrain: mobility .8, visibility .5, exposure 2; category modifiers movement 1.25, fires .5, others 1
///   BLUE requirements: movement .35, information .25, fires .2, protection .1, sustainment .1;
///                      effort scale S = 2, budget 16
///   RED requirements:  movement .5, fires .5; S = 1, budget 5
///   base exposure: movement .3, fires .6, information .1, sustainment .2, protection .05, deception .1,
///                  command .1, cyber/public_information/civil 0
inline Scenario tiny_scenario() {
  Scenario s;
  s.id = "tiny-1";
  s.template_id = "tiny";
  s.seed = 1;
  s.domain = "land";
  s.terrain.family = "urban";
  s.terrain.mobility = 0.8;
  s.terrain.visibility = 0.5;
  s.terrain.exposure = 2.0;
  s.terrain.category_modifier[index(Category::movement)] = 1.25;
  s.terrain.category_modifier[index(Category::fires)] = 0.5;
  s.blue_objective = "Secure the bridge and hold the market";
  s.red_objective = "Contest the bridge";
  s.places = {"bridge", "market", "depot", "ridge", "town"};
  using C = Category;
  s.assets = {make_asset("b1", Side::Blue, 0.5, 2, 0.5, {C::movement, C::protection, C::sustainment}),
              make_asset("b2", Side::Blue, 0.8, 4, 1.0, {C::information, C::fires, C::deception}),
              make_asset("b3", Side::Blue, 1.0, 1, 0.0, {C::movement, C::fires, C::command}),
              make_asset("r1", Side::Red, 0.6, 1, 0.5, {C::movement, C::fires})};
  auto& blue = s.requirements[index(Side::Blue)];
  blue.weight[index(C::movement)] = 0.35;
  blue.weight[index(C::information)] = 0.25;
  blue.weight[index(C::fires)] = 0.2;
  blue.weight[index(C::protection)] = 0.1;
  blue.weight[index(C::sustainment)] = 0.1;
  blue.effort_scale = 2.0;
  blue.budget = 16.0;
  auto& red = s.requirements[index(Side::Red)];
  red.weight[index(C::movement)] = 0.5;
  red.weight[index(C::fires)] = 0.5;
  red.effort_scale = 1.0;
  red.budget = 5.0;
  s.verbs[index(C::movement)] = {"transit", "deploy", "advance", "return"};
  s.verbs[index(C::fires)] = {"strike"};
  s.verbs[index(C::information)] = {"scan", "monitor"};
  s.verbs[index(C::cyber)] = {"probe"};
  s.verbs[index(C::sustainment)] = {"resupply"};
  s.verbs[index(C::protection)] = {"harden", "hold"};
  s.verbs[index(C::command)] = {"prepare"};
  s.verbs[index(C::public_information)] = {"inform"};
  s.verbs[index(C::deception)] = {"decoy"};
  s.verbs[index(C::civil)] = {"aid"};
  s.exposure[index(C::movement)] = 0.3;
  s.exposure[index(C::fires)] = 0.6;
  s.exposure[index(C::information)] = 0.1;
  s.exposure[index(C::sustainment)] = 0.2;
  s.exposure[index(C::protection)] = 0.05;
  s.exposure[index(C::deception)] = 0.1;
  s.exposure[index(C::command)] = 0.1;
  return s;
}

inline Action act(std::string id, std::string asset, std::string verb, Category c, std::string target,
                  int priority) {
  Action a;
  a.id = std::move(id);
  a.asset = std::move(asset);
  a.verb = std::move(verb);
  a.category = c;
  a.target = std::move(target);
  a.priority = priority;
  return a;
}

inline Plan make_plan(std::string objective, std::vector<Action> actions, std::vector<std::string> chain,
                      std::vector<Branch> branches = {}, Side side = Side::Blue) {
  Plan p;
  p.plan_id = "tiny-1/test";
  p.side = side;
  p.objective = std::move(objective);
  p.domain = "land";
  p.actions = std::move(actions);
  p.chain = std::move(chain);
  p.branches = std::move(branches);
  return p;
}

/// A directory under the system temp dir, unique per process and instance, removed on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("advplan-test-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

/// The built-in paper config, loaded once per test binary.
inline const ExperimentConfig& paper_config() {
  static const ExperimentConfig cfg = default_experiment_config();
  return cfg;
}

/// The template `sc` was generated from in `cfg`; std::out_of_range when the config has no such template.
inline const ScenarioTemplate& template_of(const ExperimentConfig& cfg, const Scenario& sc) {
  for (const auto& t : cfg.templates)
    if (t.id == sc.template_id) return t;
  throw std::out_of_range("no template '" + sc.template_id + "' in the config");
}

/// Sets or unsets an environment variable for a scope, restoring its old value on destruction.
class EnvGuard {
 public:
  explicit EnvGuard(const char* name) : name_(name) {
    if (const char* v = std::getenv(name)) old_ = v;
  }
  ~EnvGuard() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;
  void set(const std::string& v) const { setenv(name_, v.c_str(), 1); }
  void unset() const { unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace advplan::testing
