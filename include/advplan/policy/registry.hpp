#pragma once
// Registration by name (STYLE.md, after OpenSpiel's REGISTER_SPIEL_GAME): a function-local static map of
// factories, filled by registration objects in each plug-in's translation unit. The library is an OBJECT
// library, so the linker keeps every registration object.
#include <fmt/format.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "advplan/core/error.hpp"
#include "advplan/policy/policy_info.hpp"

namespace advplan {

struct ExperimentConfig;

template <typename Base>
class Registry {
 public:
  /// Builds a policy from its spec (k resolved), effective params and the experiment config.
  using Factory = std::function<std::unique_ptr<Base>(const PolicySpec&, const Params&, const ExperimentConfig&)>;

  static Registry& instance() {
    static Registry r;
    return r;
  }
  bool add(PolicyInfo info, Factory f) {
    const std::string name = info.short_name;
    entries_[name] = {std::move(info), std::move(f)};
    return true;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [k, v] : entries_) out.push_back(k);
    return out;
  }
  bool contains(const std::string& name) const { return entries_.contains(name); }
  /// Throws PolicyError "unknown <kind> policy 'x' (registered: a, b, c)".
  const PolicyInfo& info(const std::string& name, std::string_view kind) const { return entry(name, kind).info; }
  std::unique_ptr<Base> create(const PolicySpec& spec, const Params& params, const ExperimentConfig& cfg,
                               std::string_view kind) const {
    return entry(spec.name, kind).factory(spec, params, cfg);
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
};

}  // namespace advplan
