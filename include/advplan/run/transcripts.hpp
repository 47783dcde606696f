#pragma once
// The lines of transcripts.jsonl (docs/TRACES.md): one JSON object per call of an external policy or a live judge,
// written by the runner for the run's policies and by the rubric layer for its judges (rubric/transcripts.jsonl).
#include <string>
#include <vector>

#include "advplan/policy/llm_contract.hpp"
#include "advplan/run/config.hpp"

namespace advplan {

/// Who made the calls of one response, and for what.
struct TranscriptKey {
  const char* role;  ///< blue, red or judge
  const std::string& policy;  ///< the policy spec, or the judge spec
  const std::string& scenario;
  const std::string& condition;  ///< the condition of a RED call; empty for BLUE and judge calls
  int sample = 0;
  const std::string* graded = nullptr;  ///< a judge's: the BLUE policy whose plan it graded (key "graded")
};

/// Appends the lines for the calls behind one response: every call, or under TranscriptsMode::errors those whose
/// reply was an error or was not accepted and every call of a response that failed. The reply text and errors come
/// redacted from the client; no header is ever recorded.
void transcript_lines(std::vector<std::string>& out, const Transcript& t, TranscriptsMode mode, const TranscriptKey& key,
                      bool response_failed);

}  // namespace advplan
