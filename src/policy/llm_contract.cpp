#include "advplan/policy/llm_contract.hpp"

#include "advplan/llm/schemas.hpp"
#include "advplan/policy/replan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "advplan/core/plan_json.hpp"
#include "advplan/core/random.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/metrics/plan_layout.hpp"
#include "advplan/metrics/pressure.hpp"
#include "advplan/scenario/plan_ops.hpp"
#include "core/plan_text.hpp"

namespace advplan {
using nlohmann::json;

namespace {
/// a + b for token counts: negatives count as 0 and the sum saturates at INT_MAX instead of overflowing.
int add_tokens(int a, int b) {
  const long long sum = static_cast<long long>(std::max(0, a)) + std::max(0, b);
  return static_cast<int>(std::min<long long>(sum, std::numeric_limits<int>::max()));
}
}  // namespace

ContractStats& ContractStats::operator+=(const ContractStats& o) {
  parsed += o.parsed;
  repaired += o.repaired;
  failed += o.failed;
  retries += o.retries;
  http_retries += o.http_retries;
  prompt_tokens = add_tokens(prompt_tokens, o.prompt_tokens);
  completion_tokens = add_tokens(completion_tokens, o.completion_tokens);
  tokens_reported = tokens_reported || o.tokens_reported;
  return *this;
}

const std::string& plan_json_schema() { return llm::plan_schema_text(); }

namespace {

constexpr const char* kScenarioBegin = "SCENARIO:\n";
constexpr const char* kScenarioEnd = "\nEND SCENARIO\n";
constexpr const char* kBlueBegin = "BLUE PLAN:\n";
constexpr const char* kBlueEnd = "\nEND BLUE PLAN\n";

std::string scenario_for_prompt(const Scenario& sc) { return scenario_to_string(sc, ScenarioJson::without_seed_plans); }

std::string system_prompt(Side side) {
  return fmt::format(
      "You are the {} planner in a synthetic adversarial planning benchmark. Answer with exactly one JSON object, "
      "a plan for side {} that follows this JSON schema. Use only assets of side {} from the scenario, only verbs "
      "listed for each category in the scenario's verbs, unique action ids, and a chain that orders every action "
      "not placed in a branch option.\nSCHEMA:\n{}\n",
      to_string(side), to_string(side), to_string(side), plan_json_schema());
}


}  // namespace

CompletionRequest build_red_prompt(const Scenario& sc, const Plan& blue) {
  CompletionRequest r;
  r.messages.push_back({"system", system_prompt(Side::Red)});
  const std::string shared = fmt::format("{}{}{}", kScenarioBegin, scenario_for_prompt(sc), kScenarioEnd);
  r.messages.push_back({"user", fmt::format("{}{}{}{}Write the RED plan that answers this BLUE plan. Reply with the JSON only.",
                                            shared, kBlueBegin, plan_to_string(blue), kBlueEnd)});
  r.cache = {1, shared.size()};  // the system prompt and the scenario are shared by every BLUE plan answered
  return r;
}

CompletionRequest build_replan_prompt(const Scenario& sc, const json& request) {
  const Side side = request.at("side").get<std::string>() == "RED" ? Side::Red : Side::Blue;
  json state = request;
  state.erase("scenario");
  state.erase("plan");
  state.erase("type");
  CompletionRequest r;
  r.messages.push_back({"system", system_prompt(side)});
  const std::string shared = fmt::format("{}{}{}", kScenarioBegin, scenario_for_prompt(sc), kScenarioEnd);
  r.cache = {1, shared.size()};
  r.messages.push_back(
      {"user", fmt::format("{}PLAN:\n{}\nEND PLAN\nSTATE:\n{}\nEND STATE\nThe plan above is being played. Its step "
                           "'{}' has just ended, at a branch point; STATE gives what you observe now. Write the "
                           "revised {} plan: its chain is what runs from now on (the actions in \"done\" have "
                           "started already). Reply with the JSON only.",
                           shared, request.at("plan").dump(-1, ' ', false, json::error_handler_t::replace),
                           state.dump(-1, ' ', false, json::error_handler_t::replace),
                           request.at("branch").at("at").get<std::string>(), to_string(side))});
  return r;
}

CompletionRequest build_blue_prompt(const Scenario& sc) {
  CompletionRequest r;
  r.messages.push_back({"system", system_prompt(Side::Blue)});
  const std::string shared = fmt::format("{}{}{}", kScenarioBegin, scenario_for_prompt(sc), kScenarioEnd);
  r.messages.push_back({"user", shared + "Write the BLUE plan for this scenario. Reply with the JSON only."});
  r.cache = {1, shared.size()};  // shared by every sample of the scenario
  return r;
}

CompletionParse parse_completion(const std::string& text, const Scenario& sc, Side side) {
  CompletionParse out;
  json j;
  std::string depth_error = untrusted::json_depth_error(text);
  if (depth_error.empty()) {
    // A plan that decodes without a violation is read without the DOM (src/core/plan_text.hpp), the same plan.
    if (auto plan = detail::plan_from_text_fast(text)) {
      out.parse = detail::validated_plan_parse(std::move(*plan), sc, side);
      return out;
    }
    j = json::parse(text, nullptr, false);
  } else {
    j = json(json::value_t::discarded);
  }
  std::string candidate;
  if (j.is_discarded()) {
    // Repair: the JSON inside a ``` fence, else the outermost {...}.
    if (auto f = text.find("```"); f != std::string::npos) {
      auto start = text.find('\n', f);
      auto end = start == std::string::npos ? std::string::npos : text.find("```", start);
      if (end != std::string::npos) candidate = text.substr(start + 1, end - start - 1);
    }
    if (candidate.empty()) {
      const auto b = text.find('{');
      const auto e = text.rfind('}');
      if (b != std::string::npos && e != std::string::npos && e > b) candidate = text.substr(b, e - b + 1);
    }
    if (!candidate.empty()) {
      depth_error = untrusted::json_depth_error(candidate);
      if (depth_error.empty()) j = json::parse(candidate, nullptr, false);
      out.repaired = !j.is_discarded();
    }
  }
  if (j.is_discarded()) {
    out.parse.violations.push_back({"", text.empty()             ? "empty completion"
                                        : !depth_error.empty() ? "completion JSON nests deeper than " +
                                                                     std::to_string(untrusted::kMaxJsonDepth) + " levels"
                                                               : "completion holds no parseable JSON object"});
    return out;
  }
  drop_null_members(j);  // a null member counts as absent (a strict schema makes optional fields nullable)
  out.parse = parse_plan_json(j, sc, side);
  return out;
}

namespace {
constexpr std::size_t kMaxEchoedReply = 64 * 1024;
constexpr std::size_t kMaxSummaryViolations = 20;
constexpr std::size_t kMaxSummaryChars = 2000;

/// The violations as PlanParse::summary() gives them when that is short (every ordinary case); else the first
/// ones, each an excerpt, and how many more.
std::string bounded_summary(const PlanParse& p) {
  std::string full = p.summary();
  if (full.size() <= kMaxSummaryChars && p.violations.size() <= kMaxSummaryViolations) return untrusted::to_valid_utf8(full);
  std::string out;
  std::size_t shown = 0;
  for (const auto& v : p.violations) {
    if (shown == kMaxSummaryViolations || out.size() > kMaxSummaryChars) break;
    out += (shown++ ? "; " : "") + untrusted::excerpt(v.str());
  }
  if (shown < p.violations.size()) out += fmt::format("; and {} more", p.violations.size() - shown);
  return out;
}
}  // namespace

void apply_generation(CompletionRequest& req, const GenerationSettings& g) {
  req.temperature = g.temperature;
  req.top_p = g.top_p;
  req.max_tokens = g.max_tokens;
  req.stop = g.stop;
  req.send_seed = g.send_seed;
  req.extra_json = g.extra_json;
  req.structured = g.structured_output;
  req.strict_schema = g.strict_schema;
}

namespace {
bool wants_schema(const CompletionRequest& req) {
  return req.structured == StructuredOutput::json_schema || req.structured == StructuredOutput::automatic;
}
void attach_schema(CompletionRequest& req, const json& schema, const char* name) {
  req.schema_name = name;
  req.output_schema = (req.strict_schema ? llm::strict_subset(schema) : schema).dump();
}
}  // namespace

void attach_plan_schema(CompletionRequest& req, const Scenario& sc, Side side) {
  if (wants_schema(req)) attach_schema(req, llm::scenario_plan_schema(sc, side), "advplan_plan");
}

void attach_named_schema(CompletionRequest& req, const std::string& name) {
  if (!wants_schema(req)) return;
  if (auto s = llm::named_schema(name)) attach_schema(req, *s, "advplan_reply");
}

void drop_null_members(json& j) {
  if (j.is_array()) {
    for (auto& v : j) drop_null_members(v);
  } else if (j.is_object()) {
    for (auto it = j.begin(); it != j.end();) {
      if (it->is_null()) {
        it = j.erase(it);
      } else {
        drop_null_members(*it);
        ++it;
      }
    }
  }
}

ContractResult run_contract(const CompletionClient& client, CompletionRequest req, const Scenario& sc, Side side,
                            int max_repairs, const std::string& plan_id) {
  ContractResult res;
  // Every attempt is recorded; the conversation moves into the transcript when the contract returns.
  for (int attempt = 0; attempt <= max_repairs; ++attempt) {
    if (attempt > 0) ++res.stats.retries;
    res.transcript.calls.push_back({req.messages.size(), client.complete(req), false});
    const Completion& c = res.transcript.calls.back().reply;
    res.stats.http_retries += c.http_retries;
    if (c.prompt_tokens >= 0 || c.completion_tokens >= 0) {
      res.stats.tokens_reported = true;
      res.stats.prompt_tokens = add_tokens(res.stats.prompt_tokens, c.prompt_tokens);
      res.stats.completion_tokens = add_tokens(res.stats.completion_tokens, c.completion_tokens);
    }
    if (!c.ok) {
      // No completion came back: nothing to correct, so no re-prompt (the client has retried what is worth
      // retrying: 429, 5xx, transport errors). Re-prompts follow only an unusable completion (docs/LLM.md).
      res.failure = "transport: " + c.error;
      break;
    }
    CompletionParse p = parse_completion(c.text, sc, side);
    if (p.parse.ok()) {
      (p.repaired ? res.stats.repaired : res.stats.parsed) += 1;
      res.plan = std::move(*p.parse.plan);
      res.plan->plan_id = plan_id;
      res.failure.clear();
      res.transcript.calls.back().accepted = true;
      res.transcript.messages = std::move(req.messages);
      return res;
    }
    const std::string summary = bounded_summary(p.parse);
    res.failure = "invalid plan: " + summary;
    // The model's own reply goes back at most kMaxEchoedReply bytes long (a valid plan is far shorter).
    req.messages.push_back({"assistant", c.text.size() <= kMaxEchoedReply ? c.text : untrusted::excerpt(c.text, kMaxEchoedReply)});
    req.messages.push_back({"user", fmt::format("That reply is not a valid plan: {}. Reply with the corrected JSON plan only.",
                                                summary)});
  }
  res.stats.failed = 1;
  res.transcript.messages = std::move(req.messages);
  return res;
}

// ---------------------------------------------------------------------------------------------------------
// Offline client.

namespace {

struct Builder {
  const Scenario& sc;
  Side side;
  Plan plan;
  std::map<std::string, int> load;

  const Asset* asset_for(Category c) {
    const Asset* best = nullptr;
    for (const Asset* a : able_assets(sc, side, c)) {
      // Least-used first (resource balance), then the most capable, then the id (determinism).
      if (!best || load[a->id] < load[best->id] ||
          (load[a->id] == load[best->id] && (a->capability > best->capability ||
                                               (a->capability == best->capability && a->id < best->id))))
        best = a;
    }
    return best;
  }
  /// The first verb of the category satisfying `want` (phase), else the first verb.
  std::string verb_for(Category c, int want) {
    const auto& vs = sc.verbs[index(c)];
    for (const auto& v : vs) {
      const int ph = is_end_verb(v) ? 2 : is_start_verb(v) ? 0 : 1;
      if (ph == want) return v;
    }
    return vs.empty() ? "" : vs.front();
  }
  /// Appends an action of category c to the chain; false when no asset of the side can perform it.
  bool add(Category c, int phase, int priority) {
    const Asset* a = asset_for(c);
    if (!a || sc.verbs[index(c)].empty()) return false;
    ++load[a->id];
    Action act;
    act.asset = a->id;
    act.category = c;
    act.verb = verb_for(c, phase);
    act.target = default_target(sc);
    act.priority = priority;
    insert_action(plan, sc, std::move(act));
    return true;
  }
};

}  // namespace

Completion OfflineCompletionClient::complete(const CompletionRequest& req) const {
  Completion out;
  std::string first_user;
  int attempt = 0;
  for (const auto& m : req.messages) {
    if (m.role == "user" && first_user.empty()) first_user = m.content;
    if (m.role == "assistant") ++attempt;
  }
  const auto sc_text = prompt_section(first_user, kScenarioBegin, kScenarioEnd);
  if (!sc_text) {
    out.ok = true;
    out.text = "I need a scenario to plan against.";
    return out;
  }
  Scenario sc;
  try {
    sc = scenario_from_text(*sc_text);
  } catch (const std::exception&) {
    out.ok = true;
    out.text = "The scenario in the prompt is not readable.";
    return out;
  }
  const auto blue_text = prompt_section(first_user, kBlueBegin, kBlueEnd);
  const Side side = blue_text ? Side::Red : Side::Blue;

  // Aim the main effort where the BLUE plan is most open (RED), or at the largest requirement (BLUE).
  Category main = Category::movement;
  if (side == Side::Red) {
    std::array<double, kNumPressures> v{};
    v.fill(1.0);
    std::vector<Violation> ignored;
    std::optional<Plan> blue = detail::plan_from_text_fast(*blue_text);  // the DOM path when it hands over
    if (!blue) blue = plan_from_json(json::parse(*blue_text, nullptr, false), ignored);
    if (blue) v = vulnerability(layout_plan(*blue, sc));
    // Openness times RED's requirement for the main-effort category; the first of the largest wins.
    std::array<double, kNumPressures> aim{};
    for (std::size_t p = 0; p < kNumPressures; ++p)
      aim[p] = v[p] * sc.req(Side::Red).weight[index(kPressureTable[p].main_effort)];
    main = pressure_categories(dominant_pressure(aim)).main_effort;
  } else {
    const auto& w = sc.req(Side::Blue).weight;
    main = static_cast<Category>(std::max_element(w.begin(), w.end()) - w.begin());
  }

  Builder b{sc, side, {}, {}};
  b.plan.plan_id = fmt::format("{}/{}/llm", sc.id, side == Side::Red ? "red" : "blue");
  b.plan.side = side;
  b.plan.objective = side == Side::Red ? sc.red_objective : sc.blue_objective;
  b.plan.domain = sc.domain;
  b.add(Category::information, 0, 3);
  b.add(Category::command, 0, 3);
  b.add(Category::protection, 1, 3);
  if (!b.add(main, 1, 4)) b.add(Category::movement, 1, 4);
  b.add(main, 1, 4);
  b.add(Category::sustainment, 2, 3);
  if (!b.add(Category::movement, 2, 2)) b.add(Category::protection, 2, 2);
  if (b.plan.actions.empty()) b.add(Category::movement, 1, 3);

  std::string text = plan_to_string(b.plan, 2);
  const std::uint64_t h = fnv1a(first_user) % 20;
  if (attempt == 0) {
    if (h <= 1) {
      text = text.substr(0, text.size() / 2);  // cut off mid-object, as a model hitting its token limit does
    } else if (h == 2) {
      json j = json::parse(text);
      j["actions"][0]["priority"] = 9;  // a schema violation the validator must catch
      text = j.dump(2);
    } else if (h <= 5) {
      text = "Here is the plan as requested:\n```json\n" + text + "\n```\nIt prepares, then presses where the opponent is open.";
    }
  }
  out.ok = true;
  out.text = std::move(text);
  return out;
}

std::optional<std::string> prompt_section(const std::string& text, const char* begin, const char* end) {
  const auto b = text.find(begin);
  if (b == std::string::npos) return std::nullopt;
  const auto start = b + std::char_traits<char>::length(begin);
  const auto e = text.find(end, start);
  if (e == std::string::npos) return std::nullopt;
  return text.substr(start, e - start);
}

}  // namespace advplan
