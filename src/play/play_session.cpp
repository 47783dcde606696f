// A sitting of `advplan play` (play/play.hpp): the corpus in order, the first scenario not played yet, the
// page's state and a submitted plan checked by the validator and recorded with its time.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "advplan/core/error.hpp"
#include "advplan/core/plan_json.hpp"
#include "advplan/core/random.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/core/validation.hpp"
#include "advplan/geo/map.hpp"
#include "advplan/play/play.hpp"
#include "advplan/policy/blue_policy.hpp"

namespace advplan::play {

namespace {

/// The largest map the page is sent: positions, as the report's map bound (docs/GEO.md).
constexpr std::size_t kMaxMapPositions = 200'000;

}  // namespace

PlaySession::PlaySession(const ExperimentConfig& cfg, Side side, const std::string& out_dir)
    : cfg_(cfg), side_(side), corpus_(generate_corpus(cfg)), book_(out_dir, side) {
  if (corpus_.empty())
    throw ConfigError(fmt::format("{}: the corpus is empty; there is nothing to play", cfg.source));
  if (side_ == Side::Red) blue_ = make_blue_policy(cfg.default_blue, policy_context(cfg));
}

PlaySession::~PlaySession() = default;

std::optional<std::size_t> PlaySession::current() const {
  for (std::size_t i = 0; i < corpus_.size(); ++i)
    if (!book_.played(corpus_[i].id)) return i;
  return std::nullopt;
}

std::optional<Plan> PlaySession::opponent_plan(std::size_t i, std::string& failure) const {
  if (!blue_) return std::nullopt;
  if (opponent_for_ != i) {
    const Scenario& sc = corpus_.at(i);
    // The run's stream for this BLUE policy in sample 0 (run/scenario_eval.cpp, plan_blues).
    Rng rng = Rng::keyed(cfg_.seed, sc.id, sample_stream("blue/" + cfg_.default_blue, 0));
    BluePlanResult r = blue_->plan(sc, rng);
    opponent_ = std::move(r.plan);
    opponent_failure_ = opponent_ ? std::string() : r.failure;
    opponent_for_ = i;
  }
  failure = opponent_failure_;
  return opponent_;
}

std::string PlaySession::state_json() {
  nlohmann::ordered_json j;
  j["side"] = std::string(to_string(side_));
  j["total"] = corpus_.size();
  j["played"] = book_.size();
  const std::optional<std::size_t> i = current();
  j["done"] = !i.has_value();
  if (!i) return j.dump();
  if (shown_ != i) {
    shown_ = i;
    shown_at_ = now_();
  }
  const Scenario& sc = corpus_[*i];
  j["index"] = *i;
  j["scenario"] =
      to_json(sc, side_ == Side::Blue ? ScenarioJson::with_seed_plans : ScenarioJson::without_seed_plans);
  if (side_ == Side::Red) {
    std::string failure;
    const std::optional<Plan> blue = opponent_plan(*i, failure);
    j["opponent_policy"] = cfg_.default_blue;
    j["opponent"] = blue ? to_json(*blue) : nlohmann::json();
    j["opponent_failure"] = failure;
  }
  j["map"] = cfg_.terrain_geo
                 ? nlohmann::json::parse(geo::to_geojson_bounded(scenario_map(cfg_, sc), kMaxMapPositions))
                 : nlohmann::json();
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::vector<std::string> PlaySession::submit(std::string_view scenario_id, std::string_view plan_text) {
  const std::optional<std::size_t> i = current();
  if (!i) return {"every scenario has a plan already; there is nothing left to play"};
  const Scenario& sc = corpus_[*i];
  if (scenario_id != sc.id)
    return {fmt::format("the plan is for scenario {}, but the scenario to play is {}; reload the page",
                        untrusted::excerpt(scenario_id, 60), sc.id)};
  std::vector<std::string> messages = plan_messages(plan_text, sc, side_);
  if (!messages.empty()) return messages;
  PlanParse p = parse_plan_text(plan_text, sc, side_);
  const double seconds = shown_ == i ? std::chrono::duration<double>(now_() - shown_at_).count() : 0.0;
  book_.submit(sc.id, *p.plan, seconds);
  return {};
}

}  // namespace advplan::play
