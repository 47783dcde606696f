#pragma once
// What a policy factory receives: the narrow context of a run, never the whole experiment config. The run seed,
// the quality weights, each template's RED plan shape, the `policies.<name>.<param>` sections as written, and
// typed settings of the modules that own them (ExecConfig, LlmConfig, CouncilConfig, ...), looked up by type:
// the layer that aggregates the config (experiment/) fills the context; a policy asks for what it needs.
#include <any>
#include <cstdint>
#include <map>
#include <string>
#include <typeindex>
#include <vector>

#include "advplan/core/error.hpp"
#include "advplan/metrics/quality.hpp"
#include "advplan/scenario/scenario_template.hpp"

namespace advplan {

/// The shape of the plans RED candidates are sampled in, for one template's scenarios.
struct TemplateShape {
  PlanShape shape;
  std::vector<BranchKind> branch_kinds;
};

class PolicyContext {
 public:
  std::uint64_t run_seed = 0;
  QualityWeights quality;
  std::string source;  ///< the config file, named in errors ("configs/experiments/paper.yaml")
  std::map<std::string, std::map<std::string, double>> policy_params;  ///< policies.<name>.<param> as written
  std::map<std::string, TemplateShape> shapes;                         ///< template id -> RED plan shape

  /// Stores a module's settings; one value per type.
  template <class T>
  void set(T value) {
    settings_[std::type_index(typeid(T))] = std::move(value);
  }
  /// The module's settings; a default-constructed T when the context has none.
  template <class T>
  T get() const {
    auto it = settings_.find(std::type_index(typeid(T)));
    return it == settings_.end() ? T{} : std::any_cast<const T&>(it->second);
  }
  /// The shape for `template_id`; throws ConfigError naming the source when the run does not load it.
  const TemplateShape& shape_of(const std::string& template_id, const std::string& scenario_id) const;

 private:
  std::map<std::type_index, std::any> settings_;
};

}  // namespace advplan
