#include "advplan/policy/registry_access.hpp"

namespace advplan {

BlueRegistry& blue_registry() { return BlueRegistry::instance(); }
RedRegistry& red_registry() { return RedRegistry::instance(); }

}  // namespace advplan
