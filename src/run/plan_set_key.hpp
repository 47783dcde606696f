#pragma once
// The plan sets a run replays ("plans:FILE", src/policy/plan_set_policy.cpp) as fields of its run key (docs/TRACES.md
// "Resume"): a resume, a merge and a PSRO that replays a complete run compare each file's sha256 with the one the
// run recorded, so an edited plan set is refused by name rather than played as a second plan set of one policy.
// Private to run/.
#include <string>
#include <utility>
#include <vector>

#include "advplan/run/config.hpp"

namespace advplan::detail {

/// The prefix of a plan set's run-key field: "plan_set_sha256 " followed by the file as the spec names it.
inline constexpr const char* kPlanSetKeyPrefix = "plan_set_sha256 ";

/// (field, sha256) of each distinct plan set the conditions replay, in condition order (BLUE before RED). The file is
/// read within io::kMaxListBytes (as the policy reads it); '%', '=' and control characters of its name are written
/// %XX in the field, so that the key stays one `field=value` line per field. IoError naming an unreadable file.
std::vector<std::pair<std::string, std::string>> plan_set_key_fields(const std::vector<Condition>& conditions);

/// When `field`, a recorded key field that differs from this run's, is a plan set's: throws ConfigError naming the
/// file, one sentence (`what`: "interrupted" or "complete"; `where`: the record it was read from). Otherwise returns.
void refuse_plan_set_change(const std::string& where, const char* what, const std::string& field,
                            const std::string& was, const std::string& now);

}  // namespace advplan::detail
