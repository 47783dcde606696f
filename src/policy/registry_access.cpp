#include "advplan/policy/registry_access.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "advplan/io/plugins.hpp"

namespace advplan {

BlueRegistry& blue_registry() { return BlueRegistry::instance(); }
RedRegistry& red_registry() { return RedRegistry::instance(); }

void load_policy_plugin(const std::string& path) {
  (void)blue_registry().take_conflicts();  // anything refused before (by the library itself) is not this plug-in's
  (void)red_registry().take_conflicts();
  io::load_plugin(path);
  std::vector<std::string> dup;
  for (const auto& n : blue_registry().take_conflicts()) dup.push_back("BLUE policy '" + n + "'");
  for (const auto& n : red_registry().take_conflicts()) dup.push_back("RED policy '" + n + "'");
  if (!dup.empty())
    throw PolicyError(fmt::format("plug-in {}: registers {}, a name already registered; the existing policy is kept "
                                  "(a plug-in that means to replace it registers with ADVPLAN_OVERRIDE_BLUE_POLICY or "
                                  "ADVPLAN_OVERRIDE_RED_POLICY)",
                                  path, fmt::join(dup, ", ")));
}

}  // namespace advplan
