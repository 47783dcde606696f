#include "advplan/policy/policy_info.hpp"

#include <fmt/format.h>

#include <charconv>

#include "advplan/core/error.hpp"

namespace advplan {

PolicySpec parse_policy_spec(std::string_view text) {
  PolicySpec s;
  s.text = std::string(text);
  const auto at = text.find('@');
  s.name = std::string(text.substr(0, at));
  if (at != std::string_view::npos) {
    const std::string_view ks = text.substr(at + 1);
    long long k = 0;
    auto [ptr, ec] = std::from_chars(ks.data(), ks.data() + ks.size(), k);
    if (ec != std::errc() || ptr != ks.data() + ks.size())
      throw PolicyError(fmt::format("policy '{}': k must be an integer (accepted: 1..1024), got '{}'", text, ks));
    if (k < 1) throw PolicyError(fmt::format("policy '{}': k must be at least 1 (accepted: 1..1024), while {} was given", text, k));
    if (k > 1024) throw PolicyError(fmt::format("policy '{}': k must be at most 1024, while {} was given", text, k));
    s.k = static_cast<int>(k);
  }
  return s;
}

Params resolve_params(const PolicyInfo& info, const std::map<std::string, double>& given, std::string_view where) {
  Params out;
  for (const auto& p : info.params) out[p.name] = p.default_value;
  for (const auto& [key, value] : given) {
    const ParamSpec* spec = nullptr;
    for (const auto& p : info.params)
      if (p.name == key) spec = &p;
    if (!spec) {
      std::string valid;
      for (const auto& p : info.params) valid += (valid.empty() ? "" : ", ") + p.name;
      throw PolicyError(fmt::format("{}: unknown parameter '{}' of policy '{}' (valid: {})", where, key, info.short_name,
                                    valid.empty() ? "none" : valid));
    }
    if (!(value >= spec->lo && value <= spec->hi))
      throw PolicyError(fmt::format("{}.{}: {} must be in [{}, {}], while a value of {} was given", where, key, key,
                                    spec->lo, spec->hi, value));
    out[key] = value;
  }
  return out;
}

Params params_from_config(const PolicyInfo& info,
                          const std::map<std::string, std::map<std::string, double>>& policy_params,
                          std::string_view source) {
  static const std::map<std::string, double> kNone;
  auto it = policy_params.find(info.short_name);
  return resolve_params(info, it == policy_params.end() ? kNone : it->second,
                        fmt::format("{}: policies.{}", source, info.short_name));
}

}  // namespace advplan
