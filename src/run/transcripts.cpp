#include "advplan/run/transcripts.hpp"

#include <nlohmann/json.hpp>

namespace advplan {

void transcript_lines(std::vector<std::string>& out, const Transcript& t, TranscriptsMode mode, const TranscriptKey& key,
                      bool response_failed) {
  if (mode == TranscriptsMode::none) return;
  for (std::size_t i = 0; i < t.calls.size(); ++i) {
    const Transcript::Call& call = t.calls[i];
    if (mode == TranscriptsMode::errors && !response_failed && call.reply.ok && call.accepted) continue;
    nlohmann::ordered_json j;
    j["scenario_id"] = key.scenario;
    j["condition"] = key.condition;
    j["sample"] = key.sample;
    j["role"] = key.role;
    j["policy"] = key.policy;
    if (key.graded) j["graded"] = *key.graded;
    j["attempt"] = i;
    nlohmann::ordered_json messages = nlohmann::ordered_json::array();
    for (std::size_t m = 0; m < call.messages_sent && m < t.messages.size(); ++m)
      messages.push_back({{"role", t.messages[m].role}, {"content", t.messages[m].content}});
    j["messages"] = std::move(messages);
    j["ok"] = call.reply.ok;
    j["reply"] = call.reply.text;
    j["finish_reason"] = call.reply.finish_reason;
    j["served_by"] = call.reply.served_by;
    j["prompt_tokens"] = call.reply.prompt_tokens;
    j["completion_tokens"] = call.reply.completion_tokens;
    j["cached_tokens"] = call.reply.cached_tokens;
    j["cache_write_tokens"] = call.reply.cache_write_tokens;
    j["error"] = call.reply.error;
    j["error_kind"] = to_string(call.reply.error_kind);
    j["accepted"] = call.accepted;
    j["cache_key"] = call.reply.cache_key;
    out.push_back(j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
  }
}

}  // namespace advplan
