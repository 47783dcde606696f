#pragma once
// Registration by name (after OpenSpiel's REGISTER_SPIEL_GAME): a function-local static map of factories,
// filled by registration objects in each policy's translation unit. The library is a shared library, so every
// registration object in it is kept; a plug-in (advplan_add_policy, loaded with --plugin) registers into the
// same map when it is loaded.
#include <fmt/format.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "advplan/core/error.hpp"
#include "advplan/policy/policy_context.hpp"
#include "advplan/policy/policy_info.hpp"

namespace advplan {

template <typename Base>
class Registry {
 public:
  /// Builds a policy from its spec (k resolved), its effective params and the run's narrow context.
  using Factory = std::function<std::unique_ptr<Base>(const PolicySpec&, const Params&, const PolicyContext&)>;

  static Registry& instance() {
    static Registry r;
    return r;
  }
  /// Registers a policy under info.short_name. A name that is already registered is kept as it is and noted in
  /// conflicts() (a registration object runs during static initialisation, where nothing may throw), unless
  /// `override_existing` says the newcomer means to replace it (ADVPLAN_OVERRIDE_BLUE_POLICY). Returns whether it
  /// was registered.
  bool add(PolicyInfo info, Factory f, bool override_existing = false) {
    const std::string name = info.short_name;
    if (entries_.contains(name) && !override_existing) {
      conflicts_.push_back(name);
      return false;
    }
    entries_[name] = {std::move(info), std::move(f)};
    return true;
  }
  /// The names refused by add() since the last call, then forgotten (the plug-in loader reports them).
  std::vector<std::string> take_conflicts() { return std::exchange(conflicts_, {}); }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [k, v] : entries_) out.push_back(k);
    return out;
  }
  bool contains(const std::string& name) const { return entries_.contains(name); }
  /// Throws PolicyError "unknown <kind> policy 'x' (registered: a, b, c)".
  const PolicyInfo& info(const std::string& name, std::string_view kind) const { return entry(name, kind).info; }
  std::unique_ptr<Base> create(const PolicySpec& spec, const Params& params, const PolicyContext& ctx,
                               std::string_view kind) const {
    return entry(spec.name, kind).factory(spec, params, ctx);
  }

 private:
  struct Entry {
    PolicyInfo info;
    Factory factory;
  };
  const Entry& entry(const std::string& name, std::string_view kind) const {
    auto it = entries_.find(name);
    if (it == entries_.end()) {
      std::string list;
      for (const auto& [k, v] : entries_) list += (list.empty() ? "" : ", ") + k;
      throw PolicyError(fmt::format("unknown {} policy '{}' (registered: {})", kind, name, list));
    }
    return it->second;
  }
  std::map<std::string, Entry> entries_;
  std::vector<std::string> conflicts_;
};

}  // namespace advplan

#ifndef ADVPLAN_CONCAT
#define ADVPLAN_CONCAT_INNER(a, b) a##b
#define ADVPLAN_CONCAT(a, b) ADVPLAN_CONCAT_INNER(a, b)
#endif
