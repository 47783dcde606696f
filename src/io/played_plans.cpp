#include "advplan/io/played_plans.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string_view>

#include "advplan/core/error.hpp"
#include "advplan/core/plan_json.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/core/validation.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/text_lines.hpp"

namespace advplan {

namespace {

/// The string at `key` of line `j`; IoError naming the file, line and key when it is missing or not a string.
std::string text_at(const nlohmann::json& j, const char* key, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string()) throw IoError(fmt::format("{}: '{}' is missing or not a string", where, key));
  return it->get<std::string>();
}

PlayedPlan read_line(std::string_view line, const std::string& where) {
  nlohmann::json j;
  if (const std::string e = untrusted::parse_json_bounded(line, j); !e.empty())
    throw IoError(fmt::format("{}: {}", where, e));
  if (!j.is_object()) throw IoError(fmt::format("{}: not a JSON object", where));
  PlayedPlan p;
  p.scenario_id = text_at(j, "scenario_id", where);
  p.condition = text_at(j, "condition", where);
  p.policy = text_at(j, "policy", where);
  p.failure = text_at(j, "failure", where);
  const auto sample = j.find("sample");
  if (sample == j.end() || !sample->is_number_integer() || sample->get<long long>() < 0 ||
      sample->get<long long>() > 1'000'000)
    throw IoError(fmt::format("{}: 'sample' is missing or not an integer from 0 to 1000000", where));
  p.sample = sample->get<int>();
  const std::string side = text_at(j, "side", where);
  if (side == "BLUE") p.side = Side::Blue;
  else if (side == "RED") p.side = Side::Red;
  else throw IoError(fmt::format("{}: 'side' is '{}', not BLUE or RED", where, untrusted::excerpt(side)));
  const auto plan = j.find("plan");
  if (plan == j.end()) throw IoError(fmt::format("{}: 'plan' is missing", where));
  if (!plan->is_null()) {
    std::vector<Violation> violations;
    p.plan = plan_from_json(*plan, violations);
    if (!p.plan || !violations.empty())
      throw IoError(fmt::format("{}: plan: {}", where,
                                violations.empty() ? std::string("not a plan") : untrusted::excerpt(violations.front().str())));
    if (p.plan->actions.size() > untrusted::kMaxPlanActions)
      throw IoError(fmt::format("{}: plan: more than {} actions", where, untrusted::kMaxPlanActions));
  }
  return p;
}

}  // namespace

std::string played_plan_line(const std::string& scenario, const std::string& condition, int sample, Side side,
                             const std::string& policy, const Plan* plan, const std::string& failure) {
  nlohmann::ordered_json j;
  j["scenario_id"] = scenario;
  j["condition"] = condition;
  j["sample"] = sample;
  j["side"] = std::string(to_string(side));
  j["policy"] = policy;
  j["plan"] = plan ? to_json(*plan) : nlohmann::json();
  j["failure"] = plan ? std::string() : failure;
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::vector<PlayedPlan> read_played_plans(const std::string& path) {
  return parse_played_plans(io::read_text_file(path, io::kMaxListBytes), path, 0);
}

std::vector<PlayedPlan> parse_played_plans(std::string_view text, const std::string& path, std::size_t first_line) {
  std::vector<PlayedPlan> out;
  io::for_each_text_line(
      text,
      [&](std::string_view line, std::size_t line_no) {
        if (!line.empty()) out.push_back(read_line(line, fmt::format("{} line {}", path, line_no)));
      },
      first_line);
  return out;
}

}  // namespace advplan
