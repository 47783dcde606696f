#include "advplan/policy/policy_context.hpp"

#include <fmt/format.h>

namespace advplan {

const TemplateShape& PolicyContext::shape_of(const std::string& template_id, const std::string& scenario_id) const {
  auto it = shapes.find(template_id);
  if (it == shapes.end())
    throw ConfigError(fmt::format("{}: scenario {} names template '{}', which the config does not load", source,
                                  scenario_id, template_id));
  return it->second;
}

}  // namespace advplan
