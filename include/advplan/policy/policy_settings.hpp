#pragma once
// Settings of the policies that talk to the outside: external processes (config key `exec`) and live
// language models (config key `llm`, whose settings are in llm/settings.hpp), docs/CONFIG.md.
#include <cstddef>
#include <string>
#include <vector>

#include "advplan/llm/settings.hpp"

namespace advplan {

struct ExecConfig {
  double timeout_s = 10.0;
  std::size_t max_response_bytes = 1 << 20;
  int max_restarts = 3;
  int workers = 1;  ///< processes the policy's requests are spread over (`advplan evaluate --workers N`)
  /// Environment variables the programs do not inherit: ADVPLAN_LLM_API_KEY and the variable llm.api_key_env
  /// names (filled when the config is read), so an untrusted program never sees the live model's key.
  std::vector<std::string> withheld_env{"ADVPLAN_LLM_API_KEY"};
};

}  // namespace advplan
