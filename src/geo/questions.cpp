#include "advplan/geo/questions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "advplan/core/error.hpp"
#include "advplan/core/random.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/geo/tools.hpp"

namespace advplan::geo {
namespace {
using J = nlohmann::json;

/// Runs a tool, records it as evidence, and returns its result (a failure here is a bug in the generator).
J call(const GeoMap& m, Question& q, const std::string& tool, const J& args) {
  const std::string text = args.dump();
  const ToolResult r = call_tool(m, tool, text);
  if (!r.ok) throw std::logic_error(fmt::format("question {}: reference call {} failed: {}", q.id, tool, r.error));
  q.evidence.push_back({tool, text});
  return J::parse(r.json);
}

std::string num(double v) { return fmt::format("{:.3f}", v); }

Question make(const GeoMap& m, const std::string& kind, int tier, std::vector<int> cats, const std::string& format) {
  Question q;
  q.id = m.scenario_id + "/" + kind;
  q.scenario = m.scenario_id;
  q.kind = kind;
  q.tier = tier;
  q.categories = std::move(cats);
  q.format = format;
  return q;
}

void set_numeric(Question& q, double v) {
  q.answer = num(v);
  q.tolerance = numeric_tolerance(v);
}

/// Appends an option unless it is one already (two places may share a name).
void add_option(Question& q, const std::string& option) {
  if (std::find(q.options.begin(), q.options.end(), option) == q.options.end()) q.options.push_back(option);
}

void set_unsolvable(Question& q) {
  q.answer = "unsolvable";
  q.unsolvable = true;
  q.tolerance = 0;
  if (std::find(q.categories.begin(), q.categories.end(), 7) == q.categories.end()) q.categories.push_back(7);
}

}  // namespace

double numeric_tolerance(double value) { return std::max(0.01, 0.01 * std::abs(value)); }

namespace {

/// What the questions are about: the map, its places, RED threat zones and the BLUE assets that move (surface
/// ones when there are any), and the places and the mover the questions name.
struct QuestionMap {
  const GeoMap& m;
  std::vector<const Feature*> places, red_threats, movers;
  const Feature& p1;
  const Feature& p2;
  const Feature& plast;
  const Feature& mover;
  std::string net;
};

/// Tier 1: where (the sector of a place) and size (a threat zone's area, a straight-line distance).
void add_tier1(const QuestionMap& c, std::vector<Question>& out) {
  const GeoMap& m = c.m;
  const auto& red_threats = c.red_threats;
  const Feature& p1 = c.p1;
  const Feature& mover = c.mover;
  {  // Tier 1, where: the sector of a place.
    Question q = make(m, "sector", 1, {1}, "text");
    q.params = {{"place", p1.id}};
    q.question = fmt::format("In which sector, the blue sector or the red sector, is {} ({})?", p1.name, p1.id);
    const bool blue = call(m, q, "within", {{"point", p1.id}, {"area", "blue-sector"}})["within"].get<bool>();
    const bool red = call(m, q, "within", {{"point", p1.id}, {"area", "red-sector"}})["within"].get<bool>();
    q.answer = blue ? "blue sector" : "red sector";
    q.options = {"blue sector", "red sector"};
    if (blue != red) out.push_back(q);  // a place in both sectors (on the line) or in neither has no exact answer
  }
  if (!red_threats.empty()) {  // Tier 1, size: the area of a threat zone.
    Question q = make(m, "area", 1, {2}, "numeric");
    q.params = {{"zone", red_threats[0]->id}};
    q.question = fmt::format("What is the area, in square kilometres, of {} ({})?", red_threats[0]->name, red_threats[0]->id);
    set_numeric(q, call(m, q, "area", {{"id", red_threats[0]->id}})["km2"].get<double>());
    out.push_back(q);
  }
  {  // Tier 1, size: a straight-line distance.
    Question q = make(m, "distance", 1, {2}, "numeric");
    q.params = {{"asset", mover.id}, {"place", p1.id}};
    q.question = fmt::format("What is the straight-line distance, in km, between {} and {}?", mover.id, p1.name);
    set_numeric(q, call(m, q, "distance", {{"from", mover.id}, {"to", p1.id}})["km"].get<double>());
    out.push_back(q);
  }
}

/// Tier 2, relations: the place nearest to an asset, line of sight, the nearest RED zone.
void add_relations(const QuestionMap& c, std::vector<Question>& out) {
  const GeoMap& m = c.m;
  const auto& places = c.places;
  const auto& red_threats = c.red_threats;
  const Feature& p1 = c.p1;
  const Feature& p2 = c.p2;
  const Feature& mover = c.mover;
  {  // Tier 2, relations: the place nearest to an asset.
    Question q = make(m, "nearest_place", 2, {3}, "text");
    q.params = {{"asset", mover.id}};
    q.question = fmt::format("Which place is closest, in straight-line distance, to {}? Answer with the place name.", mover.id);
    double best = 1e300, second = 1e300;
    std::string name;
    for (const auto* p : places) {
      const double d = call(m, q, "distance", {{"from", mover.id}, {"to", p->id}})["km"].get<double>();
      if (d < best) {
        second = best;
        best = d;
        name = p->name;
      } else if (d < second) {
        second = d;
      }
    }
    q.answer = name;
    for (const auto* p : places) add_option(q, p->name);
    // A near tie has no exact answer; more options than a question file holds (a user's map) cannot be listed.
    if (second - best > 0.01 && q.options.size() <= kMaxOptions) out.push_back(q);
  }
  if (places.size() > 1) {  // Tier 2, relations: line of sight between two places.
    Question q = make(m, "line_of_sight", 2, {3}, "boolean");
    q.params = {{"from", p1.id}, {"to", p2.id}};
    q.question = fmt::format("Is there a clear line of sight from {} to {}, with no ridge or island in between? Answer yes or no.",
                             p1.name, p2.name);
    q.answer = call(m, q, "line_of_sight", {{"from", p1.id}, {"to", p2.id}})["clear"].get<bool>() ? "yes" : "no";
    q.options = {"yes", "no"};
    out.push_back(q);
  }
  if (red_threats.size() > 1) {  // Tier 2, relations, multiple choice: the RED zone whose centre is nearest.
    Question q = make(m, "nearest_threat", 2, {3}, "choice");
    q.params = {{"place", p2.id}};
    std::string options;
    double best = 1e300, second = 1e300;
    std::string who;
    for (std::size_t i = 0; i < red_threats.size(); ++i) {
      options += fmt::format("{}({}) {}", i ? ", " : "", static_cast<char>('A' + i), red_threats[i]->id);
      const double d = call(m, q, "distance", {{"from", p2.id}, {"to", red_threats[i]->id}})["km"].get<double>();
      if (d < best) {
        second = best;
        best = d;
        who = red_threats[i]->id;
      } else if (d < second) {
        second = d;
      }
    }
    q.question = fmt::format("Which RED threat zone has its centre nearest to {}? Options: {}. Answer with the zone id.",
                             p2.name, options);
    q.answer = who;
    for (const auto* z : red_threats) add_option(q, z->id);
    if (second - best > 0.01 && q.options.size() <= kMaxOptions) out.push_back(q);  // a near tie has no exact answer
  }
}

/// Tier 2, patterns and optimal paths: places inside RED zones, the shortest route avoiding them.
void add_patterns_and_paths(const QuestionMap& c, std::vector<Question>& out) {
  const GeoMap& m = c.m;
  const auto& places = c.places;
  const Feature& plast = c.plast;
  const Feature& mover = c.mover;
  const std::string& net = c.net;
  {  // Tier 2, patterns: how many places lie inside RED threat zones.
    Question q = make(m, "places_in_threats", 2, {5}, "numeric");
    q.question = "How many of the map's places lie inside at least one RED threat zone?";
    int n = 0;
    for (const auto* p : places) {
      n += call(m, q, "within", {{"point", p->id}, {"area", "RED"}})["within"].get<bool>() ? 1 : 0;
    }
    q.answer = std::to_string(n);
    q.tolerance = 0;
    out.push_back(q);
  }
  {  // Tier 2, optimal paths: the shortest route avoiding the threats (unsolvable when none exists).
    Question q = make(m, "route_length", 2, {4}, "numeric");
    q.params = {{"asset", mover.id}, {"place", plast.id}};
    q.question = fmt::format("What is the length, in km, of the shortest {} route from {} to {} that avoids every RED "
                             "threat zone? If no such route exists, answer unsolvable.",
                             net, mover.id, plast.name);
    const J r = call(m, q, "route", {{"from", mover.id}, {"to", plast.id}, {"avoid", {"RED"}}});
    if (r["feasible"].get<bool>()) set_numeric(q, r["length_km"].get<double>());
    else set_unsolvable(q);
    out.push_back(q);
  }
}

/// Tier 3, predictions: reaching the order's objective in its window, the first BLUE asset to arrive.
void add_predictions(const QuestionMap& c, std::vector<Question>& out) {
  const GeoMap& m = c.m;
  const auto& movers = c.movers;
  const Feature& p2 = c.p2;
  const Feature& mover = c.mover;
  const std::string& net = c.net;
  {  // Tier 3, predictions across the order and the map: reach the order's objective within its window.
    Question q = make(m, "order_reach", 3, {4, 6}, "numeric");
    q.params = {{"asset", mover.id}};
    q.question = fmt::format("Read the BLUE order. Can {} reach the order's objective place along the {} network, avoiding "
                             "every RED threat zone, within the order's time window? If it can, give the travel time in "
                             "hours; if it cannot, answer unsolvable.",
                             mover.id, net);
    const J o = call(m, q, "order", J::object());
    const std::string target = o["objective_place"].get<std::string>();
    q.params["place"] = target;
    const J t = call(m, q, "travel_time", {{"from", mover.id}, {"to", target}, {"avoid", {"RED"}}});
    if (t["feasible"].get<bool>() && t["hours"].get<double>() <= o["time_window_h"].get<double>())
      set_numeric(q, t["hours"].get<double>());
    else
      set_unsolvable(q);
    out.push_back(q);
  }
  {  // Tier 3, relations and paths: which BLUE asset arrives first.
    Question q = make(m, "first_to_reach", 3, {3, 4}, "text");
    q.params = {{"place", p2.id}};
    q.question = fmt::format("Which BLUE {} asset reaches {} first along the {} network while avoiding every RED threat "
                             "zone? Answer with the asset id, or unsolvable if none can.",
                             fmt::join(m.rule.surface_domains, " or "), p2.name, net);
    double best = 1e300, second = 1e300;
    std::string who;
    for (const auto* a : movers) {
      const J t = call(m, q, "travel_time", {{"from", a->id}, {"to", p2.id}, {"avoid", {"RED"}}});
      if (!t["feasible"].get<bool>()) continue;
      const double h = t["hours"].get<double>();
      if (h < best) {
        second = best;
        best = h;
        who = a->id;
      } else if (h < second) {
        second = h;
      }
    }
    if (who.empty()) set_unsolvable(q);
    else q.answer = who;
    for (const auto* a : movers) add_option(q, a->id);
    add_option(q, "unsolvable");  // the prompt offers it
    if ((who.empty() || second - best > 0.01) && q.options.size() <= kMaxOptions) out.push_back(q);
  }
}

/// Tier 3, a deadline the prompt says is met (sometimes it is not).
void add_deadline(const QuestionMap& c, std::vector<Question>& out) {
  const GeoMap& m = c.m;
  const Feature& p1 = c.p1;
  const Feature& mover = c.mover;
  const std::string& net = c.net;
  {  // Tier 3, a deadline the prompt says is met: half the time it is generous (answer the hours), half the time it
     // is 60% of the true time (unsolvable, whatever the prompt says). The half is drawn from the question stream.
    Question q = make(m, "deadline", 3, {6}, "numeric");
    q.params = {{"asset", mover.id}, {"place", p1.id}};
    const J t = call(m, q, "travel_time", {{"from", mover.id}, {"to", p1.id}, {"avoid", {"RED"}}});
    const bool feasible = t["feasible"].get<bool>();
    const double hours = feasible ? t["hours"].get<double>() : 1.0;
    Rng pick = Rng::keyed(0, m.scenario_id, "geo-questions/deadline");
    const bool generous = feasible && pick.bernoulli(0.5);
    const double deadline = generous ? std::ceil(hours * 1.5 * 10 + 1) / 10 : std::max(0.1, std::floor(hours * 0.6 * 10) / 10);
    if (!generous && feasible && hours <= deadline) return;  // a move too short to be late
    q.params["deadline_h"] = fmt::format("{:.1f}", deadline);
    q.question = fmt::format("Command has confirmed that {} will be at {} within {:.1f} hours, moving along the {} network "
                             "and avoiding every RED threat zone. How many hours will the move take? If the move cannot "
                             "be made within {:.1f} hours, answer unsolvable.",
                             mover.id, p1.name, deadline, net, deadline);
    if (generous) set_numeric(q, hours);
    else set_unsolvable(q);
    out.push_back(q);
  }
}

}  // namespace

std::vector<Question> generate_questions(const GeoMap& m) {
  std::vector<Question> out;
  const auto places = m.of_kind("place");
  const auto red_threats = m.of_kind("threat", "RED");
  std::vector<const Feature*> movers;
  for (const auto* a : m.of_kind("asset", "BLUE"))
    if (std::find(m.rule.surface_domains.begin(), m.rule.surface_domains.end(), a->domain) != m.rule.surface_domains.end())
      movers.push_back(a);
  if (movers.empty()) movers = m.of_kind("asset", "BLUE");
  if (places.empty() || movers.empty()) return out;
  const QuestionMap c{m,          places,     red_threats, movers, *places[0], *places[places.size() > 1 ? 1 : 0],
                      *places.back(), *movers[0], m.rule.network};
  add_tier1(c, out);
  add_relations(c, out);
  add_patterns_and_paths(c, out);
  add_predictions(c, out);
  add_deadline(c, out);
  return out;
}

std::string question_to_json(const Question& q) {
  nlohmann::ordered_json j{{"id", q.id},           {"scenario", q.scenario},   {"kind", q.kind},
                           {"tier", q.tier},       {"categories", q.categories}, {"format", q.format},
                           {"question", q.question}, {"answer", q.answer},     {"tolerance", q.tolerance},
                           {"unsolvable", q.unsolvable}};
  if (!q.options.empty()) j["options"] = q.options;
  j["params"] = q.params;
  auto ev = nlohmann::ordered_json::array();
  for (const auto& e : q.evidence) ev.push_back({{"tool", e.tool}, {"args", nlohmann::json::parse(e.args)}});
  j["evidence"] = ev;
  return j.dump();
}

Question question_from_json(const std::string& line, const std::string& where) {
  nlohmann::json j;
  if (auto err = untrusted::parse_json_bounded(line, j, 8); !err.empty())
    throw ConfigError(fmt::format("{}: a question line is not valid JSON ({})", where, err));
  if (!j.is_object()) throw ConfigError(fmt::format("{}: a question line must be a JSON object", where));
  Question q;
  auto str = [&](const char* k) -> std::string {
    if (!j.contains(k) || !j[k].is_string()) throw ConfigError(fmt::format("{}: field '{}' must be a string", where, k));
    return j[k].get<std::string>();
  };
  q.id = str("id");
  q.scenario = str("scenario");
  q.kind = j.contains("kind") && j["kind"].is_string() ? j["kind"].get<std::string>() : "";
  q.question = str("question");
  q.answer = str("answer");
  q.format = str("format");
  if (!j.contains("tier") || !j["tier"].is_number_integer() || j["tier"].get<int>() < 1 || j["tier"].get<int>() > 3)
    throw ConfigError(fmt::format("{}: field 'tier' must be 1, 2 or 3", where));
  q.tier = j["tier"].get<int>();
  if (!j.contains("categories") || !j["categories"].is_array())
    throw ConfigError(fmt::format("{}: field 'categories' must be an array of 1..7", where));
  for (const auto& c : j["categories"]) {
    if (!c.is_number_integer() || c.get<int>() < 1 || c.get<int>() > 7)
      throw ConfigError(fmt::format("{}: field 'categories' must be an array of 1..7", where));
    q.categories.push_back(c.get<int>());
  }
  q.tolerance = j.contains("tolerance") && j["tolerance"].is_number() ? j["tolerance"].get<double>() : 0.0;
  q.unsolvable = q.answer == "unsolvable";
  if (j.contains("options")) {  // optional: files written before it have none (strict grading then needs equality)
    const auto& o = j["options"];
    const bool ok = o.is_array() && o.size() <= kMaxOptions &&
                    std::all_of(o.begin(), o.end(), [](const nlohmann::json& v) {
                      return v.is_string() && !v.get<std::string>().empty() && v.get<std::string>().size() <= kMaxOptionBytes;
                    });
    if (!ok)
      throw ConfigError(fmt::format("{}: field 'options' must be an array of at most {} non-empty strings of at most {} "
                                    "bytes each",
                                    where, kMaxOptions, kMaxOptionBytes));
    for (const auto& v : o) add_option(q, v.get<std::string>());
  }
  if (j.contains("evidence") && j["evidence"].is_array())
    for (const auto& e : j["evidence"])
      if (e.is_object() && e.contains("tool") && e["tool"].is_string() && e.contains("args") && e["args"].is_object())
        q.evidence.push_back({e["tool"].get<std::string>(), e["args"].dump()});
  if (j.contains("params") && j["params"].is_object())
    for (const auto& [k, v] : j["params"].items())
      if (v.is_string()) q.params[k] = v.get<std::string>();
  return q;
}

}  // namespace advplan::geo
