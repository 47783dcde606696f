#include "advplan/rubric/judge.hpp"
#include "advplan/policy/llm_contract.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "advplan/core/error.hpp"
#include "advplan/core/plan_json.hpp"
#include "advplan/core/random.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/rubric/plans.hpp"
#include "advplan/io/embedded_files.hpp"
#include "advplan/io/sha256.hpp"
#include "advplan/policy/completion_cache.hpp"
#include "advplan/llm/providers.hpp"
#include "advplan/policy/policy_context.hpp"
#include "advplan/policy/policy_settings.hpp"

namespace advplan::rubric {
using nlohmann::json;

namespace {

constexpr const char* kPromptPath = "configs/prompts/rubric_judge.txt";
constexpr const char* kItemsBegin = "ITEMS:\n";
constexpr const char* kItemsEnd = "\nEND ITEMS\n";
constexpr const char* kScenarioBegin = "SCENARIO:\n";
constexpr const char* kScenarioEnd = "\nEND SCENARIO\n";
constexpr const char* kPlanBegin = "PLAN:\n";
constexpr const char* kPlanEnd = "\nEND PLAN\n";
/// The most failed-item entries a reply may hold beyond the number of items (duplicates, unknown ids).
constexpr std::size_t kMaxExtraEntries = 16;
/// The longest reply echoed back to the judge when it is re-asked.
constexpr std::size_t kMaxEchoedReply = 4000;


/// The JSON object of a reply: the whole text, else the inside of its first ``` fence.
std::string json_text_of(const std::string& text, json& j) {
  std::string err = untrusted::parse_json_bounded(text, j);
  if (err.empty()) return err;
  const auto f = text.find("```");
  if (f == std::string::npos) return err;
  const auto start = text.find('\n', f);
  const auto end = start == std::string::npos ? std::string::npos : text.find("```", start);
  if (end == std::string::npos) return err;
  // Only prose-free fences count: a reply is the JSON, optionally fenced.
  const std::string before = text.substr(0, f), after = text.substr(end + 3);
  auto blank = [](const std::string& s) {
    return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); });
  };
  if (!blank(before) || !blank(after)) return "the reply has text outside the JSON object";
  return untrusted::parse_json_bounded(text.substr(start + 1, end - start - 1), j);
}

}  // namespace

const std::string& judge_prompt() {
  static const std::string text(io::embedded_text(kPromptPath));
  return text;
}

const std::string& judge_prompt_sha256() {
  static const std::string sha = io::sha256_hex(judge_prompt());
  return sha;
}

std::string judge_items_json(std::span<const RubricItem> items) {
  json its = json::array();
  for (const auto& it : items)
    its.push_back({{"item_id", it.item_id},
                   {"question", it.question},
                   {"pass_condition", it.pass_condition},
                   {"fail_condition", it.fail_condition},
                   {"polarity", it.negative() ? "negative" : "positive"}});
  return its.dump(-1, ' ', false, json::error_handler_t::replace);
}

CompletionRequest build_judge_prompt(std::span<const RubricItem> items, const Plan& plan, const Scenario& sc) {
  CompletionRequest r;
  r.messages.push_back({"system", judge_prompt()});
  // The items and the scenario come first: every plan of the scenario graded by this judge shares them.
  const std::string shared = fmt::format("{}{}{}{}{}{}", kItemsBegin, judge_items_json(items), kItemsEnd, kScenarioBegin,
                                         scenario_to_string(sc, ScenarioJson::without_seed_plans), kScenarioEnd);
  r.messages.push_back({"user", fmt::format("{}{}{}{}List the items whose pass condition does not hold. "
                                            "Reply with the JSON only.",
                                            shared, kPlanBegin, to_json(plan).dump(), kPlanEnd)});
  r.cache = {1, shared.size()};
  return r;
}

JudgeReply parse_judge_reply(const std::string& text, std::span<const RubricItem> items) {
  JudgeReply out;
  json j;
  if (text.empty()) {
    out.error = "the reply is empty";
    return out;
  }
  if (const std::string err = json_text_of(text, j); !err.empty()) {
    out.error = "the reply is not one JSON object (" + err + ")";
    return out;
  }
  if (!j.is_object()) {
    out.error = "the reply is not a JSON object";
    return out;
  }
  for (const auto& [k, v] : j.items())
    if (k != "failed_items") {
      out.error = fmt::format("the reply has the key '{}'; the only key is failed_items", untrusted::excerpt(k, 40));
      return out;
    }
  const auto fi = j.find("failed_items");
  if (fi == j.end() || !fi->is_array()) {
    out.error = "the reply has no failed_items array";
    return out;
  }
  if (fi->size() > items.size() + kMaxExtraEntries) {
    out.error = fmt::format("failed_items has {} entries for {} items", fi->size(), items.size());
    return out;
  }
  std::set<std::string> ids, seen;
  for (const auto& it : items) ids.insert(it.item_id);
  for (std::size_t i = 0; i < fi->size(); ++i) {
    const json& e = (*fi)[i];
    auto field = [&](const char* key) -> const json* {
      const auto f = e.find(key);
      return f != e.end() && f->is_string() ? &*f : nullptr;
    };
    if (!e.is_object()) {
      out.error = fmt::format("failed_items[{}] is not an object", i);
      return out;
    }
    for (const auto& [k, v] : e.items())
      if (k != "item_id" && k != "evidence" && k != "rationale") {
        out.error = fmt::format("failed_items[{}] has the key '{}'; the keys are item_id, evidence and rationale", i,
                                untrusted::excerpt(k, 40));
        return out;
      }
    const json *id = field("item_id"), *ev = field("evidence"), *ra = field("rationale");
    if (!id || !ev || !ra) {
      out.error = fmt::format("failed_items[{}] needs the strings item_id, evidence and rationale", i);
      return out;
    }
    const std::string item = id->get<std::string>();
    if (!ids.count(item)) {
      out.unknown_ids.push_back(untrusted::excerpt(item, 80));
      continue;
    }
    if (!seen.insert(item).second) continue;  // listed twice: once is enough
    out.failures.push_back({item, untrusted::excerpt(ev->get<std::string>(), kMaxJudgeTextChars),
                            untrusted::excerpt(ra->get<std::string>(), kMaxJudgeTextChars)});
  }
  return out;
}

JudgeOutcome run_judge(const CompletionClient& client, std::span<const RubricItem> items, const Plan& plan,
                       const Scenario& sc, int retries, const GenerationSettings* generation) {
  return run_judge_request(client, items, build_judge_prompt(items, plan, sc), retries, generation, false);
}

JudgeOutcome run_judge_request(const CompletionClient& client, std::span<const RubricItem> items,
                               CompletionRequest req, int retries, const GenerationSettings* generation,
                               bool require_failure) {
  JudgeOutcome out;
  if (generation) apply_generation(req, *generation);
  attach_named_schema(req, "judge_verdict");
  // The transcript's messages are the request's as they grow; each call records how many it sent.
  auto record = [&](const Completion& c, bool accepted) {
    out.transcript.calls.push_back({req.messages.size(), c, accepted});
    out.transcript.messages = req.messages;
  };
  for (int attempt = 0; attempt <= retries; ++attempt) {
    ++out.attempts;
    const Completion c = client.complete(req);
    record(c, false);
    if (!c.ok) {
      out.reason = "transport: " + untrusted::excerpt(c.error, 300);
      continue;  // asked again as it stands
    }
    JudgeReply r = parse_judge_reply(c.text, items);
    std::string problem;
    if (!r.error.empty()) {
      ++out.malformed;
      problem = r.error;
      out.reason = "malformed reply: " + r.error;
    } else if (!r.unknown_ids.empty()) {
      std::string list;
      for (const auto& id : r.unknown_ids) list += (list.empty() ? "'" : ", '") + id + "'";
      problem = fmt::format("the ids {} are not items of this plan's rubric", list);
      out.reason = "unknown item ids: " + list;
      out.unknown_ids.insert(out.unknown_ids.end(), r.unknown_ids.begin(), r.unknown_ids.end());
    } else if (require_failure && r.failures.empty() && !items.empty()) {
      ++out.malformed;
      problem = "the text graded is empty, so at least one item fails; list the failed items";
      out.reason = "malformed reply: no failed item for an empty text";
    } else {
      out.ok = true;
      out.reason.clear();
      out.failures = std::move(r.failures);
      out.transcript.calls.back().accepted = true;
      return out;
    }
    req.messages.push_back({"assistant", c.text.size() <= kMaxEchoedReply ? c.text : untrusted::excerpt(c.text, kMaxEchoedReply)});
    req.messages.push_back({"user", fmt::format("That reply does not follow the schema: {}. Reply again with the JSON "
                                                "object only, using only the item ids listed under ITEMS.",
                                                problem)});
  }
  out.reason = fmt::format("{} after {} attempt{}", out.reason, out.attempts, out.attempts == 1 ? "" : "s");
  return out;
}

Completion OfflineJudgeClient::complete(const CompletionRequest& req) const {
  Completion out;
  std::string first_user;
  int users = 0;
  for (const auto& m : req.messages)
    if (m.role == "user") {
      if (users++ == 0) first_user = m.content;
    }
  const auto items_text = prompt_section(first_user, kItemsBegin, kItemsEnd);
  const auto sc_text = prompt_section(first_user, kScenarioBegin, kScenarioEnd);
  const auto plan_text = prompt_section(first_user, kPlanBegin, kPlanEnd);
  if (!items_text || !sc_text || !plan_text) {
    out.error = "offline judge: the prompt has no ITEMS, SCENARIO or PLAN section";
    return out;
  }
  std::vector<RubricItem> items;
  std::vector<std::string> failed;
  try {
    const json its = json::parse(*items_text);
    const Scenario sc = scenario_from_text(*sc_text);
    std::vector<Violation> violations;
    const auto plan = plan_from_json(json::parse(*plan_text), violations);
    if (!plan) throw Error("the plan does not decode");
    for (const auto& it : its) {
      RubricItem item;
      item.case_id = sc.id;
      item.item_id = it.at("item_id").get<std::string>();
      item.severity = it.at("polarity").get<std::string>() == "negative" ? Severity::D : Severity::I;
      items.push_back(std::move(item));
    }
    const auto passed = judge_plan("exact", items, *plan, sc);
    for (std::size_t i = 0; i < items.size(); ++i)
      if (!passed[i]) failed.push_back(items[i].item_id);
  } catch (const std::exception& e) {
    out.error = fmt::format("offline judge: {}", untrusted::excerpt(e.what(), 200));
    return out;
  }
  json fi = json::array();
  for (const auto& id : failed)
    fi.push_back({{"item_id", id},
                  {"evidence", "the plan's chain and actions"},
                  {"rationale", "the exact check of this item does not hold"}});
  std::string text = json{{"failed_items", fi}}.dump();
  if (users == 1) {  // first attempt: answer as real models sometimes do
    const std::uint64_t h = fnv1a(first_user) % 8;
    if (h == 0) {
      text = "Here is my verdict:\n" + text + "\nI hope this helps.";  // prose around the JSON: malformed
    } else if (h == 1) {
      text = text.substr(0, text.size() / 2);  // truncated
    } else if (h == 2) {
      json j = json::parse(text);
      j["failed_items"].push_back({{"item_id", "no_such_item"}, {"evidence", "-"}, {"rationale", "-"}});
      text = j.dump();  // an unknown item id
    }
  }
  out.ok = true;
  out.text = std::move(text);
  return out;
}

bool is_llm_judge(const std::string& spec) {
  return spec == "llm_judge_offline" || spec == "llm_judge" || spec.rfind("llm_judge:", 0) == 0;
}

std::unique_ptr<CompletionClient> make_judge_client(const std::string& spec, const LlmConfig& llm,
                                                    const PolicyContext& ctx) {
  if (spec == "llm_judge_offline") return std::make_unique<OfflineJudgeClient>();
  if (!is_llm_judge(spec)) throw PolicyError(fmt::format("rubric: '{}' is not an LLM judge", spec));
  const std::string model = spec.size() > 10 ? spec.substr(10) : "";
  return make_live_client(resolve_llm_settings(llm, model, spec), ctx);
}

}  // namespace advplan::rubric
