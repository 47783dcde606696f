#pragma once
// The language-model JSON contract (paper: "the same JSON schema and parser as a live model-backed policy").
// A prompt builder, a completion-client interface, the offline deterministic client that stands in for a
// model, and the parser every completion goes through (the same parser and validator as every other plan).
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "advplan/core/plan.hpp"
#include "advplan/core/scenario.hpp"
#include "advplan/core/validation.hpp"
#include "advplan/llm/request.hpp"
#include "advplan/policy/policy_settings.hpp"

namespace advplan {

/// Copies the generation settings into the request (the prompt builders leave them at their defaults).
void apply_generation(CompletionRequest& req, const GenerationSettings& g);
/// When the request asks for json_schema output (or auto): attaches the plan schema of `sc` for `side`
/// (llm::scenario_plan_schema, or its strict subset); otherwise leaves the request as it is. Call after
/// apply_generation.
void attach_plan_schema(CompletionRequest& req, const Scenario& sc, Side side);
/// The same for a named schema of llm::schema_names() (judge_verdict, quiz_reply).
void attach_named_schema(CompletionRequest& req, const std::string& name);
/// A parsed reply with its null members removed, recursively (a strict schema makes optional fields nullable).
void drop_null_members(nlohmann::json& j);

/// The plan JSON schema (JSON Schema draft 2020-12 text) given to models.
const std::string& plan_json_schema();

/// Prompt for a RED response to `blue`: the schema, the scenario (without BLUE seed plans) and the BLUE plan,
/// each in a marked section ("SCENARIO:", "BLUE PLAN:").
CompletionRequest build_red_prompt(const Scenario& sc, const Plan& blue);
/// The text between the first `begin` marker and the next `end` marker after it, or nullopt (the offline
/// clients read their prompts' marked sections back with it).
std::optional<std::string> prompt_section(const std::string& text, const char* begin, const char* end);

/// Prompt for a BLUE plan for the scenario.
CompletionRequest build_blue_prompt(const Scenario& sc);

/// Counts of contract outcomes (paper: parse, repair, failure; plus retries).
struct ContractStats {
  int parsed = 0;    ///< completions parsed as-is
  int repaired = 0;  ///< completions that needed extraction (code fences, prose around the JSON)
  int failed = 0;    ///< requests that produced no valid plan after every retry
  int retries = 0;   ///< re-prompts after an unusable completion
  int http_retries = 0;
  int prompt_tokens = 0, completion_tokens = 0;  ///< sums over reported counts
  bool tokens_reported = false;
  ContractStats& operator+=(const ContractStats& o);
};

struct CompletionParse {
  PlanParse parse;
  bool repaired = false;
};
/// Parses a completion: the whole text as JSON, else the JSON inside a ``` fence, else the outermost {...}
/// (the last two count as repaired). Then the plan parser and validator. Never throws.
CompletionParse parse_completion(const std::string& text, const Scenario& sc, Side side);

/// The calls behind one response of a model or an external process, as transcripts.jsonl records them
/// (docs/TRACES.md): the conversation as last sent, and for each call how much of it was sent and what came back.
/// Each call's messages are a prefix of the conversation (a re-prompt appends the reply and the violations).
struct Transcript {
  struct Call {
    std::size_t messages_sent = 0;  ///< messages[0, messages_sent) went with this call
    Completion reply;
    bool accepted = false;  ///< its reply became the response (a parsed, valid plan)
  };
  std::vector<ChatMessage> messages;
  std::vector<Call> calls;
};

struct ContractResult {
  std::optional<Plan> plan;  ///< set when a valid plan came back
  std::string failure;       ///< why not, when it did not
  ContractStats stats;
  Transcript transcript;  ///< every attempt
};
/// Runs the contract: prompt, complete, parse; on an unusable completion re-prompts with the violations, up
/// to `max_repairs` times. The plan id is overwritten with `plan_id`.
ContractResult run_contract(const CompletionClient& client, CompletionRequest req, const Scenario& sc, Side side,
                            int max_repairs, const std::string& plan_id);

/// The offline deterministic client: reads the scenario and BLUE plan back out of the prompt and writes a
/// structured plan (preparation, the pressure BLUE leaves most open, sustainment, protection, consolidation).
/// On the first attempt of some prompts (chosen by a hash of the prompt) it answers like a real model does:
/// prose around fenced JSON (repairable), truncated JSON, or a schema violation (retried).
class OfflineCompletionClient : public CompletionClient {
 public:
  Completion complete(const CompletionRequest& req) const override;
  std::string name() const override { return "offline"; }
};

}  // namespace advplan
