#pragma once
// Language-model rubric judges (docs/RUBRIC.md "LLM judges"): a frozen prompt (configs/prompts/rubric_judge.txt,
// compiled in, its SHA-256 in run_metadata.json), the reply schema (only the failed items, each with evidence and a
// rationale), its bounded parser and validator, the bounded re-ask loop, and the offline stand-in judge that
// exercises the same path without a network.
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "advplan/core/plan.hpp"
#include "advplan/core/scenario.hpp"
#include "advplan/rubric/score.hpp"
#include "advplan/policy/llm_contract.hpp"

namespace advplan {

class PolicyContext;
struct LlmConfig;

namespace rubric {

/// The frozen judge prompt (the system message) and the lower-case hex SHA-256 of its text.
const std::string& judge_prompt();
const std::string& judge_prompt_sha256();

/// The ITEMS section's JSON array: {item_id, question, pass_condition, fail_condition, polarity} per item (keys in
/// nlohmann's sorted order, as every judge prompt has had them).
std::string judge_items_json(std::span<const RubricItem> items);

/// The request: the frozen prompt, then ITEMS (a JSON array of {item_id, question, pass_condition,
/// fail_condition, polarity}), SCENARIO (without seed plans) and PLAN, each between marker lines.
CompletionRequest build_judge_prompt(std::span<const RubricItem> items, const Plan& plan, const Scenario& sc);

/// One failed item as the judge reported it (evidence and rationale cut to kMaxJudgeTextChars).
struct JudgeFailure {
  std::string item_id, evidence, rationale;
};
inline constexpr std::size_t kMaxJudgeTextChars = 500;

/// A judge reply read against the schema: `error` (one sentence) when it is malformed; otherwise the failures of
/// known items and the ids that name no item.
struct JudgeReply {
  std::string error;
  std::vector<JudgeFailure> failures;
  std::vector<std::string> unknown_ids;
};
/// Bounded (untrusted::parse_json_bounded); never throws. Accepts the JSON object alone, or inside one ``` fence.
JudgeReply parse_judge_reply(const std::string& text, std::span<const RubricItem> items);

/// What a judge said about one plan after at most 1 + retries attempts.
struct JudgeOutcome {
  bool ok = false;                     ///< false: a recorded failure of the judge on this plan (never a pass)
  std::string reason;                  ///< why not, one sentence (the last attempt's problem)
  std::vector<JudgeFailure> failures;  ///< when ok
  std::vector<std::string> unknown_ids;  ///< every unknown id of every attempt (recorded, ignored)
  int attempts = 0, malformed = 0;     ///< requests made; replies that did not follow the schema
  Transcript transcript;               ///< every attempt: the messages sent and each reply (rubric/transcripts.jsonl)
};
/// Asks `client`; a malformed reply or one with unknown ids is re-asked with the problem stated, and a transport
/// failure (after the client's own bounded retries) is asked again as it stands, at most `retries` times in all.
/// After the bound the outcome is a failure with the last problem as its reason.
/// `generation` (policies.llm_judge.generation over llm.generation) goes into every request when given.
JudgeOutcome run_judge(const CompletionClient& client, std::span<const RubricItem> items, const Plan& plan,
                       const Scenario& sc, int retries, const GenerationSettings* generation = nullptr);

/// The re-ask loop of run_judge on any prepared request (the plan judge's, the brief judge's). With
/// `require_failure`, a valid reply that lists no failed item is re-asked like a malformed one (the text graded is
/// empty, so some item must fail).
JudgeOutcome run_judge_request(const CompletionClient& client, std::span<const RubricItem> items,
                               CompletionRequest req, int retries, const GenerationSettings* generation,
                               bool require_failure);

/// The offline stand-in: reads ITEMS, SCENARIO and PLAN back out of the prompt and answers with the exact rule
/// judge's verdicts. On the first attempt of some prompts (chosen by a hash of the prompt) it answers as a real
/// model can: prose around the JSON, truncated JSON, or an unknown item id; re-asked, it answers correctly.
class OfflineJudgeClient final : public CompletionClient {
 public:
  Completion complete(const CompletionRequest& req) const override;
  std::string name() const override { return "offline-judge"; }
};

/// True for the specs of LLM judges: "llm_judge_offline", "llm_judge", "llm_judge:MODEL".
bool is_llm_judge(const std::string& spec);
/// The client of an LLM judge spec: the offline stand-in, or the live client (llm settings, the model from the
/// spec) behind the run's completion cache. Throws PolicyError when a live judge has no endpoint.
std::unique_ptr<CompletionClient> make_judge_client(const std::string& spec, const LlmConfig& llm,
                                                    const PolicyContext& ctx);

}  // namespace rubric
}  // namespace advplan
